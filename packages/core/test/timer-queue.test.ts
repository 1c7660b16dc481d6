import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { systemClock } from '@cairn/core/backend';
import { TimerQueue } from '../src/clock/timer-queue.js';

// The system clock's `setTimer` (issue 18): the engine arms one around every inline step body and
// cancels it when the body ends; those timers share one Node.js timer.
const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const setTimer = systemClock.setTimer as (ms: number, fire: () => void) => () => void;

/** Runs `script` (an ES module importing @cairn/core from source) in a child process; its stdout. */
async function child(script: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', '--input-type=module', '-e', script], {
    cwd: PACKAGE,
    timeout: 30_000,
  });
  return stdout;
}

describe('systemClock.setTimer', () => {
  it('arms no Node.js timer per timer when each is cancelled before the next: 200 make at most one setTimeout', () => {
    const original = globalThis.setTimeout;
    let armed = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      armed += 1;
      return original(...args);
    }) as typeof setTimeout;
    try {
      for (let i = 0; i < 200; i++) setTimer(250, () => assert.fail('a cancelled timer fired'))();
    } finally {
      globalThis.setTimeout = original;
    }
    assert.ok(armed <= 1, `setTimeout called ${armed} times`);
  });

  it('fires each pending timer once, in order of due time, never a cancelled one; zero, NaN and timers added while firing fire too', async () => {
    const fired: string[] = [];
    await new Promise<void>((done) => {
      setTimer(30, () => {
        fired.push('30');
        setTimer(1, () => {
          fired.push('added by 30');
          done();
        });
      });
      setTimer(5, () => fired.push('5'));
      setTimer(Number.NaN, () => fired.push('NaN'));
      const cancel = setTimer(10, () => fired.push('cancelled'));
      setTimer(20, () => fired.push('20'));
      setTimer(0, () => fired.push('0'));
      cancel();
      cancel();
    });
    assert.deepEqual(fired, ['NaN', '0', '5', '20', '30', 'added by 30']);
  });

  it('keeps the process alive while a timer is pending, and not once every timer was cancelled', async () => {
    assert.equal(await child(`import { systemClock } from '@cairn/core/backend'; systemClock.setTimer(50, () => console.log('fired'));`), 'fired\n');
    // Would hold the process for a minute if the cancelled timer kept it alive (the test's bound is 30 s).
    assert.equal(
      await child(`import { systemClock } from '@cairn/core/backend'; systemClock.setTimer(60_000, () => console.log('fired'))(); console.log('exits');`),
      'exits\n',
    );
  });

  it('is driven by mocked timers as one setTimeout per timer was', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const queue = new TimerQueue();
    const fired: string[] = [];
    queue.add(250, () => fired.push('250'));
    queue.add(500, () => fired.push('500'));
    queue.add(300, () => fired.push('cancelled'))();
    t.mock.timers.tick(249);
    assert.deepEqual(fired, []);
    t.mock.timers.tick(1);
    assert.deepEqual(fired, ['250']);
    // Due times are counted from when each timer was added, so the second may trail the first's
    // schedule by the fraction of a millisecond that passed between the two adds.
    t.mock.timers.tick(251);
    assert.deepEqual(fired, ['250', '500']);
  });
});
