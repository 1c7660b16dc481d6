import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError } from '@cairn/core';
import { ManualClock } from '@cairn/core/testing';

// Lets every pending microtask and one macrotask turn run, without moving any clock.
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ManualClock', () => {
  it('starts at the given time and only moves when moved', async () => {
    const clock = new ManualClock({ start: 1_000 });
    assert.equal(clock.now(), 1_000);
    await turn();
    assert.equal(clock.now(), 1_000);
    await clock.advance(250);
    assert.equal(clock.now(), 1_250);
    assert.equal(new ManualClock({ start: new Date('2030-01-01T00:00:00Z') }).now(), Date.UTC(2030, 0, 1));
    assert.equal(new ManualClock().now(), Date.UTC(2025, 0, 1));
  });

  it('resolves a sleep only once the clock reaches its deadline', async () => {
    const clock = new ManualClock({ start: 0 });
    let woke = false;
    const sleeping = clock.sleep(100).then(() => (woke = true));
    assert.equal(clock.pendingTimers, 1);
    await turn();
    assert.equal(woke, false);
    await clock.advance(99);
    assert.equal(woke, false);
    assert.equal(clock.pendingTimers, 1);
    await clock.advance(1);
    assert.equal(woke, true);
    assert.equal(clock.pendingTimers, 0);
    await sleeping;
  });

  it('fires due sleepers in deadline order, ties in creation order, each seeing its own deadline', async () => {
    const clock = new ManualClock({ start: 0 });
    const seen: string[] = [];
    const arm = (label: string, ms: number) => clock.sleep(ms).then(() => seen.push(`${label}@${clock.now()}`));
    void arm('c', 30);
    void arm('a', 10);
    void arm('b1', 20);
    void arm('b2', 20);
    void arm('late', 31);
    await clock.advance(30);
    assert.deepEqual(seen, ['a@10', 'b1@20', 'b2@20', 'c@30']);
    assert.equal(clock.now(), 30);
    assert.equal(clock.pendingTimers, 1);
  });

  it('lets woken code run, and its new timers fire, before later timers within the same advance', async () => {
    const clock = new ManualClock({ start: 0 });
    const seen: string[] = [];
    void clock.sleep(20).then(() => seen.push(`t20@${clock.now()}`));
    void (async () => {
      await clock.sleep(10);
      seen.push(`t10@${clock.now()}`);
      // Several awaits deep, like real code between two timers.
      await Promise.resolve();
      await Promise.resolve();
      await clock.sleep(5);
      seen.push(`t15@${clock.now()}`);
      await clock.sleep(100);
      seen.push('never within the window');
    })();
    await clock.advance(20);
    assert.deepEqual(seen, ['t10@10', 't15@15', 't20@20']);
    assert.equal(clock.pendingTimers, 1);
  });

  it('rejects with the abort reason and forgets the sleeper', async () => {
    const clock = new ManualClock({ start: 0 });
    const controller = new AbortController();
    const sleeping = clock.sleep(50, controller.signal);
    assert.equal(clock.pendingTimers, 1);
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(sleeping, (err) => err === reason);
    assert.equal(clock.pendingTimers, 0);
    await clock.advance(100);

    const aborted = AbortSignal.abort(new Error('already'));
    await assert.rejects(clock.sleep(10, aborted), /already/);
    assert.equal(clock.pendingTimers, 0);
  });

  it('does not fire a sleeper aborted while an advance is in progress', async () => {
    const clock = new ManualClock({ start: 0 });
    const controller = new AbortController();
    const seen: string[] = [];
    void clock.sleep(10).then(() => {
      seen.push('first');
      controller.abort(new Error('cancelled by first'));
    });
    clock.sleep(20, controller.signal).then(
      () => seen.push('second fired'),
      () => seen.push('second aborted'),
    );
    await clock.advance(30);
    assert.deepEqual(seen, ['first', 'second aborted']);
  });

  it('resolves a sleep of 0 or less without an advance, and refuses NaN', async () => {
    const clock = new ManualClock({ start: 0 });
    await clock.sleep(0);
    await clock.sleep(-5);
    assert.equal(clock.now(), 0);
    await assert.rejects(clock.sleep(Number.NaN), (err) => CairnError.is(err, 'INVALID_INPUT'));
    await assert.rejects(clock.advance(-1), (err) => CairnError.is(err, 'INVALID_INPUT'));
    await assert.rejects(clock.advance(Infinity), (err) => CairnError.is(err, 'INVALID_INPUT'));
  });

  it('adds up un-awaited advances instead of interleaving them', async () => {
    const clock = new ManualClock({ start: 0 });
    const seen: number[] = [];
    for (const ms of [5, 15, 25]) void clock.sleep(ms).then(() => seen.push(clock.now()));
    const first = clock.advance(10);
    const second = clock.advance(10);
    await Promise.all([first, second]);
    assert.equal(clock.now(), 20);
    assert.deepEqual(seen, [5, 15]);
  });

  it('set() moves forward like advance and backward without firing', async () => {
    const clock = new ManualClock({ start: 1_000 });
    const seen: number[] = [];
    void clock.sleep(100).then(() => seen.push(clock.now()));
    await clock.set(500);
    assert.equal(clock.now(), 500);
    assert.deepEqual(seen, []);
    // The deadline is absolute (1 100): going back made the wait longer.
    await clock.advance(599);
    assert.deepEqual(seen, []);
    await clock.set(new Date(5_000));
    assert.deepEqual(seen, [1_100]);
    assert.equal(clock.now(), 5_000);
  });

  it('advanceToNextTimer jumps to the earliest deadline and reports whether one was pending', async () => {
    const clock = new ManualClock({ start: 0 });
    const seen: string[] = [];
    void clock.sleep(40).then(() => seen.push('40'));
    void clock.sleep(10).then(() => seen.push('10'));
    void clock.sleep(10).then(() => seen.push('10b'));
    assert.equal(await clock.advanceToNextTimer(), true);
    assert.equal(clock.now(), 10);
    assert.deepEqual(seen, ['10', '10b']);
    assert.equal(await clock.advanceToNextTimer(), true);
    assert.equal(clock.now(), 40);
    assert.equal(await clock.advanceToNextTimer(), false);
    assert.equal(clock.now(), 40);
  });

  it('runAll fires everything, including timers armed by woken code, and stops a runaway loop', async () => {
    const clock = new ManualClock({ start: 0 });
    const seen: number[] = [];
    void (async () => {
      for (let i = 0; i < 5; i++) {
        await clock.sleep(1_000);
        seen.push(clock.now());
      }
    })();
    void clock.sleep(2_500).then(() => seen.push(clock.now()));
    await clock.runAll();
    assert.deepEqual(seen, [1_000, 2_000, 2_500, 3_000, 4_000, 5_000]);
    assert.equal(clock.pendingTimers, 0);

    let stop = false;
    void (async () => {
      while (!stop) await clock.sleep(1);
    })();
    await assert.rejects(clock.runAll({ maxTimers: 50 }), (err) => CairnError.is(err, 'INVALID_INPUT'));
    assert.equal(clock.now(), 5_050);
    stop = true;
    // The clock is still usable after the failed runAll.
    await clock.runAll();
    assert.equal(clock.pendingTimers, 0);
  });
});
