import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { WakeCoalescer } from '../src/wake-coalescer.js';

// Time is mocked (node:test's mock timers: setTimeout and Date). The coalescer's windows are a few
// milliseconds: on real timers, a machine busy enough to stall this process for more than the 64 ms
// window between two notifications turned the stream into "quiet spells" and the wakes counted
// here grew (seen at a load average of 45 on 2 cores). Mocked, each scenario runs exactly as
// written, and takes no real time.
beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
afterEach(() => mock.timers.reset());

/** Moves the mocked clock on by `ms`, running every timer that falls due. */
const sleep = (ms: number) => mock.timers.tick(ms);

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
function notify(coalescer: WakeCoalescer, ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    coalescer.notified('q');
    sleep(2);
  }
}

describe('WakeCoalescer', () => {
  it('a process whose wakes keep finding nothing backs off to the poll: it stops waking once its window reached the longest', () => {
    // Other processes take every job: this one's wakes never find one (no found()). Its window
    // doubles 1 → 2 → … → 64 ms, one wake each, and then it leaves the jobs to the poll — waking
    // every 64 ms for as long as the stream lasts would be a fetch per window per process.
    const { state, coalescer } = counted();
    notify(coalescer, 1500);
    sleep(100);
    coalescer.close();
    assert.ok(state.wakes <= 8, `${state.wakes} wakes over 1.5 s of notifications while every wake found nothing`);
  });

  it('a loser that finds a job (through the poll or a finishing slot) reacts at once to the next notification', () => {
    const { state, coalescer } = counted();
    notify(coalescer, 400);
    const backedOff = state.wakes;
    coalescer.found('q');
    coalescer.notified('q');
    sleep(30);
    assert.equal(state.wakes, backedOff + 1);
    coalescer.close();
  });

  it('after a quiet spell longer than the window, a notification wakes a slot again', () => {
    const { state, coalescer } = counted();
    notify(coalescer, 400);
    const backedOff = state.wakes;
    sleep(100); // longer than the 64 ms window: a quiet spell
    coalescer.notified('q');
    sleep(30);
    assert.equal(state.wakes, backedOff + 1);
    coalescer.close();
  });

  it('a process that wins its wakes reacts to every burst, and one running a job of the queue still wakes within the window', () => {
    const { state, coalescer } = counted();
    for (let i = 0; i < 5; i++) {
      coalescer.notified('q');
      sleep(10);
      coalescer.found('q');
    }
    assert.equal(state.wakes, 5);
    state.running = true;
    coalescer.notified('q');
    sleep(150);
    assert.equal(state.wakes, 6);
    coalescer.close();
  });
});
