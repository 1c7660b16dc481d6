import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WakeCoalescer } from '../src/wake-coalescer.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A coalescer over counters: `wake` always finds an idle slot; `running` is what the test sets. */
function counted(window = { minMs: 1, maxMs: 64 }) {
  const state = { wakes: 0, running: false };
  const coalescer = new WakeCoalescer(
    () => {
      state.wakes++;
      return true;
    },
    () => state.running,
    window,
  );
  return { state, coalescer };
}

/** Notifications of queue `q` for `ms`, a few milliseconds apart (well inside the 64 ms window). */
async function notify(coalescer: WakeCoalescer, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    coalescer.notified('q');
    await sleep(2);
  }
}

describe('WakeCoalescer', () => {
  it('a process whose wakes keep finding nothing backs off to the poll: it stops waking once its window reached the longest', async () => {
    // Other processes take every job: this one's wakes never find one (no found()). Its window
    // doubles 1 → 2 → … → 64 ms, one wake each, and then it leaves the jobs to the poll — waking
    // every 64 ms for as long as the stream lasts would be a fetch per window per process.
    const { state, coalescer } = counted();
    await notify(coalescer, 1500);
    await sleep(100);
    coalescer.close();
    assert.ok(state.wakes <= 8, `${state.wakes} wakes over 1.5 s of notifications while every wake found nothing`);
  });

  it('a loser that finds a job (through the poll or a finishing slot) reacts at once to the next notification', async () => {
    const { state, coalescer } = counted();
    await notify(coalescer, 400);
    const backedOff = state.wakes;
    coalescer.found('q');
    coalescer.notified('q');
    await sleep(30);
    assert.equal(state.wakes, backedOff + 1);
    coalescer.close();
  });

  it('after a quiet spell longer than the window, a notification wakes a slot again', async () => {
    const { state, coalescer } = counted();
    await notify(coalescer, 400);
    const backedOff = state.wakes;
    await sleep(100); // longer than the 64 ms window: a quiet spell
    coalescer.notified('q');
    await sleep(30);
    assert.equal(state.wakes, backedOff + 1);
    coalescer.close();
  });

  it('a process that wins its wakes reacts to every burst, and one running a job of the queue still wakes within the window', async () => {
    const { state, coalescer } = counted();
    for (let i = 0; i < 5; i++) {
      coalescer.notified('q');
      await sleep(10);
      coalescer.found('q');
    }
    assert.equal(state.wakes, 5);
    state.running = true;
    coalescer.notified('q');
    await sleep(150);
    assert.equal(state.wakes, 6);
    coalescer.close();
  });
});
