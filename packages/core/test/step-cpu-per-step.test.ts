import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import { systemClock, type Clock } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';
import { copyRecord } from '../src/store/copy-record.js';
import { timerInSlices } from '../src/clock/timer-slices.js';

// Issue 18: an inline step's engine CPU. The profile (docs/benchmarks.md) showed per-step
// AbortControllers (the body's signal, the deferred start's timer), their abort events and the
// DOMException an `abort()` without a reason builds, and structuredClone in the memory store.
// These tests count what a run makes per step: the counts must not grow with the steps.

const steps = defineWorkflow('cpu-steps', async (ctx, n: number) => {
  for (let i = 0; i < n; i++) await ctx.step(`s${i}`, () => i);
  return n;
});

/** Counts AbortControllers made, and `sleep`s and timers armed on `clock`, while `fn` runs. */
async function counted(clock: Clock & { sleeps?: number }, fn: () => Promise<void>): Promise<{ controllers: number; sleeps: number }> {
  const Original = globalThis.AbortController;
  let controllers = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      controllers += 1;
    }
  };
  const sleep = clock.sleep.bind(clock);
  let sleeps = 0;
  clock.sleep = (ms, signal) => {
    sleeps += 1;
    return sleep(ms, signal);
  };
  try {
    await fn();
  } finally {
    globalThis.AbortController = Original;
    clock.sleep = sleep;
  }
  return { controllers, sleeps };
}

async function runOf(n: number): Promise<{ controllers: number; sleeps: number }> {
  const engine = createEngine({ store: createMemoryStore(), workflows: [steps], recoveryIntervalMs: 1e12, startMode: 'inline' });
  await engine.start({ workers: false });
  try {
    const clock = systemClock as Clock;
    const warm = await engine.startRun(steps, 1);
    await warm.result();
    return await counted(clock, async () => {
      const handle = await engine.startRun(steps, n);
      assert.equal(await handle.result(), n);
    });
  } finally {
    await engine.stop();
  }
}

/** Counts Node.js timers armed (`setTimeout`) while a run of `n` steps runs. */
async function timersOf(n: number): Promise<number> {
  // Each inline step defers recording its start by a timer of the engine's shared timer queue,
  // which arms one Node.js timer for the earliest deadline. With the default 250 ms, whether the
  // warm-up run's timer is still armed when the measured run starts, or fires during a slow run and
  // is armed again, depends on the machine's speed (CI at load 20: 2 timers for 1 step, 1 for 40).
  // A minute keeps the queue's timer armed throughout; a step arming a timer of its own, outside
  // the queue, still shows as one per step.
  const engine = createEngine({
    store: createMemoryStore(),
    workflows: [steps],
    recoveryIntervalMs: 1e12,
    startMode: 'inline',
    timings: { recordStartAfterMs: 60_000 },
  });
  await engine.start({ workers: false });
  const original = globalThis.setTimeout;
  try {
    await (await engine.startRun(steps, 1)).result();
    let armed = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      armed += 1;
      return original(...args);
    }) as typeof setTimeout;
    assert.equal(await (await engine.startRun(steps, n)).result(), n);
    return armed;
  } finally {
    globalThis.setTimeout = original;
    await engine.stop();
  }
}

describe('engine CPU per inline step (issue 18)', () => {
  it('an inline step arms no Node.js timer of its own (the deferred start shares one): a run of 40 steps arms as many as a run of 1', async () => {
    const one = await timersOf(1);
    const forty = await timersOf(40);
    assert.equal(forty, one, `setTimeout calls: ${one} for 1 step, ${forty} for 40`);
  });

  it('an inline step makes no AbortController and no clock sleep: a run of 40 steps makes as many as a run of 1', async () => {
    const one = await runOf(1);
    const forty = await runOf(40);
    assert.equal(forty.controllers, one.controllers, `AbortControllers: ${one.controllers} for 1 step, ${forty.controllers} for 40`);
    assert.equal(forty.sleeps, one.sleeps, `clock sleeps: ${one.sleeps} for 1 step, ${forty.sleeps} for 40`);
  });

  it('a body that reads its signal only after the attempt settled finds it aborted (ENGINE_STOPPED, attempt settled)', async () => {
    let kept: { signal: AbortSignal } | undefined;
    const wf = defineWorkflow('late-signal', async (ctx) => {
      await ctx.step('a', (s) => {
        kept = s;
        return 1;
      });
      return 'done';
    });
    const engine = createEngine({ store: createMemoryStore(), workflows: [wf], recoveryIntervalMs: 1e12, startMode: 'inline' });
    await engine.start({ workers: false });
    try {
      assert.equal(await (await engine.startRun(wf, null)).result(), 'done');
      const signal = kept!.signal;
      assert.equal(signal.aborted, true);
      assert.ok(CairnError.is(signal.reason, 'ENGINE_STOPPED'));
      assert.equal((signal.reason as Error).message, 'attempt settled');
      assert.deepEqual(Object.keys(kept!).sort(), ['attempt', 'key', 'runId', 'signal']);
    } finally {
      await engine.stop();
    }
  });

  it('a body that reads its signal after its run was cancelled finds the cancel reason', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let reason: unknown;
    const wf = defineWorkflow('cancel-then-read', async (ctx) => {
      await ctx.step('a', async (s) => {
        started();
        await gate;
        reason = s.signal.aborted ? s.signal.reason : 'not aborted';
      });
    });
    const engine = createEngine({ store: createMemoryStore(), workflows: [wf], recoveryIntervalMs: 1e12 });
    await engine.start();
    try {
      const handle = await engine.startRun(wf, null);
      await running;
      await engine.cancel(handle.id, { reason: 'stop it' });
      release();
      await assert.rejects(handle.result(), (error: unknown) => CairnError.is(error));
      assert.ok(CairnError.is(reason, 'CANCELLED'), `reason: ${String(reason)}`);
    } finally {
      await engine.stop();
    }
  });
});

describe('Clock.setTimer', () => {
  it('ManualClock: fires at its deadline in order with sleeps, counts as pending, and a cancelled one never fires', async () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    clock.setTimer(100, () => fired.push('t100'));
    void clock.sleep(50).then(() => fired.push('s50'));
    const cancel = clock.setTimer(60, () => fired.push('cancelled'));
    assert.equal(clock.pendingTimers, 3);
    cancel();
    cancel();
    assert.equal(clock.pendingTimers, 2);
    await clock.advance(99);
    assert.deepEqual(fired, ['s50']);
    await clock.advance(1);
    assert.deepEqual(fired, ['s50', 't100']);
    assert.equal(clock.pendingTimers, 0);
    assert.throws(
      () => clock.setTimer(Number.NaN, () => {}),
      (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
    );
  });

  it('the system clock waits in slices and a cancel stops it', async () => {
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      timerInSlices(
        30,
        () => {
          order.push('fired');
          resolve();
        },
        7,
      );
    });
    const cancel = timerInSlices(5, () => order.push('late'), 2);
    cancel();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(order, ['fired']);
    assert.equal(typeof systemClock.setTimer, 'function');
  });
});

describe('copyRecord', () => {
  it('copies deeply like structuredClone, keeping undefined values and handing other objects to structuredClone', () => {
    const date = new Date(5);
    const value = { a: 1, b: [1, { c: 'x' }], d: undefined, e: null, f: date, g: { h: -0 } };
    const copy = copyRecord(value);
    assert.deepEqual(copy, structuredClone(value));
    assert.ok(Object.hasOwn(copy, 'd'));
    assert.notEqual(copy.b, value.b);
    assert.notEqual(copy.b[1], value.b[1]);
    assert.notEqual(copy.f, date);
    assert.equal(copy.f.getTime(), 5);
    assert.ok(Object.is(copy.g.h, -0));
    (copy.b[1] as { c: string }).c = 'changed';
    assert.equal((value.b[1] as { c: string }).c, 'x');
  });
});
