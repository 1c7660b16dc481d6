// Durations past what a Node timer holds (2^31-1 ms, 24.8 days) and values no store can hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, type Duration, type WorkflowContext, createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import { MAX_DURATION_MS, sleepInSlices, systemClock } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';
import { countingStore, createFixture, turns, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

const DAY = 86_400_000;
const YEAR = 365.25 * DAY;
const realPause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('the system clock', () => {
  it('sleeps longer than a Node timer holds without firing early, and aborts such a sleep at once', async () => {
    const controller = new AbortController();
    let fired = false;
    const long = systemClock.sleep(30 * DAY, controller.signal).then(
      () => void (fired = true),
      (reason: unknown) => reason,
    );
    await realPause(100);
    assert.equal(fired, false, 'a 30-day sleep must not fire after 100 ms');
    controller.abort('stop');
    assert.equal(await long, 'stop');
    assert.equal(fired, false);
  });
});

describe('sleepInSlices', () => {
  it('waits the whole duration over several slices, and an abort between slices stops it', async () => {
    const started = performance.now();
    await sleepInSlices(100, undefined, 15);
    assert.ok(performance.now() - started >= 99, `resolved after ${performance.now() - started} ms, before 100`);
    const controller = new AbortController();
    let settled = false;
    const aborted = sleepInSlices(1_000, controller.signal, 15)
      .then(
        () => 'resolved',
        (reason: unknown) => reason,
      )
      .finally(() => void (settled = true));
    await realPause(60);
    assert.equal(settled, false);
    controller.abort('stop');
    assert.equal(await aborted, 'stop');
  });
});

describe('long durations on real timers (system clock, local queue)', () => {
  it("ctx.sleep('25d') suspends the run once: no busy loop of claims", async () => {
    const counter = countingStore(createMemoryStore());
    const wf = defineWorkflow('trial', async (ctx) => {
      await ctx.sleep('trial', '25d');
      return 'over';
    });
    const engine = createEngine({ store: counter, workflows: [wf], recoveryIntervalMs: 60_000, logger: { warn: () => {}, error: () => {} } });
    await engine.start();
    try {
      const before = Date.now();
      const h = await engine.startRun(wf, null);
      await waitForStatus(counter.inner, h.id, 'waiting');
      await realPause(300);
      const run = await counter.inner.runs.get(h.id);
      assert.equal(run?.status, 'waiting');
      assert.ok(run!.wakeAt! >= before + 25 * DAY && run!.wakeAt! <= Date.now() + 25 * DAY, `wakeAt ${run?.wakeAt}`);
      assert.equal(counter.count('runs.claim'), 1, 'claimed once, then left asleep');
    } finally {
      await engine.stop({ graceMs: 1_000 });
    }
  });

  it("a step with timeout '25d' and a 150 ms body succeeds", async () => {
    const wf = defineWorkflow('long-timeout', async (ctx) =>
      ctx.step(
        'slow',
        async () => {
          await realPause(150);
          return 'done';
        },
        { timeout: '25d' },
      ),
    );
    const engine = createEngine({ store: createMemoryStore(), workflows: [wf], recoveryIntervalMs: 60_000, logger: { warn: () => {}, error: () => {} } });
    await engine.start();
    try {
      const h = await engine.startRun(wf, null);
      assert.equal(await h.result({ timeout: '10s' }), 'done');
    } finally {
      await engine.stop({ graceMs: 1_000 });
    }
  });
});

describe('long durations on the ManualClock (local queue)', () => {
  for (const [label, duration, ms] of [
    ['30 days', '30d', 30 * DAY],
    ['100 years', '36525d', 100 * YEAR],
  ] as const) {
    it(`a ${label} sleep suspends once and wakes once`, async () => {
      let after = 0;
      const wf = defineWorkflow('long-sleep', async (ctx) => {
        await ctx.sleep('long', duration);
        after++;
        return 'awake';
      });
      // Recovery every 7 years, not 10: 10 divides 100 years, so a pass fell on the wake instant and
      // its findDue raced the woken job's claim (a pass that looked first dispatches the run again).
      const fx = await createFixture({ workflows: [wf], recoveryIntervalMs: 7 * YEAR });
      try {
        const start = fx.clock.now();
        const h = await fx.engine.startRun(wf, null);
        const asleep = await waitForIdle(fx.inner, h.id);
        assert.deepEqual([asleep.status, asleep.wakeAt], ['waiting', start + ms]);
        assert.equal(fx.counter.count('runs.claim'), 1);
        await fx.clock.advance(ms - 1);
        await turns(20);
        assert.equal((await fx.inner.runs.get(h.id))?.status, 'waiting');
        assert.equal(after, 0);
        await fx.clock.advance(1);
        await waitForStatus(fx.inner, h.id, 'completed');
        assert.equal(await h.result(), 'awake');
        assert.equal(after, 1);
        assert.equal(fx.counter.count('runs.claim'), 2, 'one claim to fall asleep, one to wake');
      } finally {
        await fx.engine.stop();
      }
    });
  }

  it("a queued step with timeout '30d' is not abandoned before its timeout", async () => {
    const wf = defineWorkflow('queued-long-timeout', async (ctx) => ctx.step('work', () => 'ok', { queued: true, timeout: '30d' }));
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 'ok');
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('durations and times no store can hold are refused at the call', () => {
  const cases: Array<[string, (ctx: WorkflowContext) => Promise<unknown>, RegExp]> = [
    ['sleep 1e20', (ctx) => ctx.sleep('x', 1e20), /100000000000000000000/],
    ['sleep -1', (ctx) => ctx.sleep('x', -1), /-1/],
    ['sleep NaN', (ctx) => ctx.sleep('x', Number.NaN), /NaN/],
    ['sleep Infinity', (ctx) => ctx.sleep('x', Number.POSITIVE_INFINITY), /Infinity/],
    ["sleep '10 minutes'", (ctx) => ctx.sleep('x', '10 minutes' as Duration), /10 minutes/],
    ["sleep ''", (ctx) => ctx.sleep('x', '' as Duration), /""/],
    ['sleep past 100 years', (ctx) => ctx.sleep('x', MAX_DURATION_MS + 1), /sleep "x"/],
    ['sleepUntil 1e20', (ctx) => ctx.sleepUntil('x', 1e20), /100000000000000000000/],
    ['sleepUntil the last Date', (ctx) => ctx.sleepUntil('x', new Date(8.64e15)), /sleepUntil "x"/],
    ['sleepUntil NaN', (ctx) => ctx.sleepUntil('x', Number.NaN), /NaN/],
    ['sleepUntil an invalid Date', (ctx) => ctx.sleepUntil('x', new Date('nope')), /Invalid Date|NaN/],
    ['step timeout 1e20', (ctx) => ctx.step('s', () => 1, { timeout: 1e20 }), /100000000000000000000/],
    ["step timeout '10 minutes'", (ctx) => ctx.step('s', () => 1, { timeout: '10 minutes' as Duration }), /10 minutes/],
    ['event timeout 1e20', (ctx) => ctx.waitForEvent('e', { timeout: 1e20 }), /100000000000000000000/],
    ['event timeout -1', (ctx) => ctx.waitForEvent('e', { timeout: -1 }), /-1/],
    ['backoff delay 1e20', (ctx) => ctx.step('s', () => 1, { retries: 1, backoff: { type: 'fixed', delay: 1e20 } }), /100000000000000000000/],
    ['backoff maxDelay NaN', (ctx) => ctx.step('s', () => 1, { retries: 1, backoff: { type: 'exponential', delay: '1s', maxDelay: Number.NaN } }), /NaN/],
  ];

  it('each bad value throws INVALID_INPUT naming it, before anything is recorded', async () => {
    const seen: string[] = [];
    const wf = defineWorkflow('bad-durations', async (ctx) => {
      for (const [label, call, names] of cases) {
        try {
          await call(ctx);
          seen.push(`${label}: accepted`);
        } catch (error) {
          const ok = CairnError.is(error, 'INVALID_INPUT') && names.test(error.message);
          seen.push(`${label}: ${ok ? 'INVALID_INPUT' : `${(error as CairnError).code} ${(error as Error).message}`}`);
        }
      }
      return 'checked';
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.deepEqual(
        seen,
        cases.map(([label]) => `${label}: INVALID_INPUT`),
      );
      assert.deepEqual(await fx.inner.steps.load(h.id), [], 'nothing recorded');
    } finally {
      await fx.engine.stop();
    }
  });

  it('an uncaught bad duration fails the run with INVALID_INPUT (never left running)', async () => {
    const wf = defineWorkflow('huge-sleep', async (ctx) => {
      await ctx.sleep('x', 1e20);
      return 'unreachable';
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      const run = await waitForStatus(fx.inner, h.id, ['failed', 'completed', 'waiting']);
      assert.equal(run.status, 'failed');
      assert.equal(run.error?.code, 'INVALID_INPUT');
      assert.match(run.error?.message ?? '', /100000000000000000000/);
    } finally {
      await fx.engine.stop();
    }
  });

  it('engine options that take durations are checked by createEngine', () => {
    const store = createMemoryStore();
    for (const options of [
      { recoveryIntervalMs: 1e20 },
      { recoveryIntervalMs: -1 },
      { pollIntervalMs: Number.NaN },
      { stopGraceMs: -5 },
      { timings: { leaseMs: 1e20 } },
      { timings: { leaseMs: 0 } },
      { timings: { dispatchTimeoutMs: Number.POSITIVE_INFINITY } },
      { timings: { startGraceMs: 'soon' as unknown as number } },
    ]) {
      assert.throws(
        () => createEngine({ store, workflows: [], ...options }),
        (error: unknown) => CairnError.is(error, 'INVALID_INPUT'),
        JSON.stringify(options),
      );
    }
    // Infinity stays valid for stopGraceMs: it means "wait for ever".
    createEngine({ store, workflows: [], stopGraceMs: Number.POSITIVE_INFINITY, clock: new ManualClock() });
  });
});

describe('exponential backoff', () => {
  it('is capped at 1 hour by default', async () => {
    let attempts = 0;
    const wf = defineWorkflow('backoff-cap', async (ctx) =>
      ctx.step(
        'flaky',
        () => {
          attempts++;
          if (attempts <= 16) throw new Error(`attempt ${attempts}`);
          return attempts;
        },
        { retries: 16, backoff: { type: 'exponential', delay: '1s' } },
      ),
    );
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      for (let i = 0; i < 200; i++) {
        const run = await fx.inner.runs.get(h.id);
        if (run?.status === 'completed') break;
        await waitForIdle(fx.inner, h.id).catch(() => undefined);
        if ((await fx.inner.runs.get(h.id))?.status === 'completed') break;
        await fx.clock.advanceToNextTimer();
      }
      assert.equal(await h.result(), 17);
      const history = await fx.engine.history(h.id);
      const waits = history.slice(1).map((a, i) => a.startedAt - history[i]!.endedAt!);
      const expected = Array.from({ length: 16 }, (_, i) => Math.min(1000 * 2 ** i, 3_600_000));
      assert.deepEqual(waits, expected);
    } finally {
      await fx.engine.stop();
    }
  });
});
