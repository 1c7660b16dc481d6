import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CairnError, type Duration, type Json, type WorkflowContext, defineWorkflow } from '@cairn/core';
import { ManualClock } from '@cairn/core/testing';
import { codeChain, countingStore, createFixture, rejectsWithCode, turns, until, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

describe('timers', () => {
  it('sleep suspends the run (waiting, wakeAt set, no lease) and resumes once the clock reaches wakeAt', async () => {
    let after = 0;
    const wf = defineWorkflow('sleeper', async (ctx) => {
      await ctx.sleep('nap', '1m');
      after++;
      return 'rested';
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const start = fx.clock.now();
      const h = await fx.engine.startRun(wf, null);
      const run = await waitForIdle(fx.inner, h.id);
      assert.equal(run.status, 'waiting');
      assert.equal(run.wakeAt, start + 60_000);
      assert.equal(run.lease, undefined);
      const [step] = await fx.inner.steps.load(h.id);
      assert.deepEqual([step!.key, step!.kind, step!.status, step!.wakeAt], ['nap', 'sleep', 'waiting', start + 60_000]);
      const claims = fx.counter.count('runs.claim');
      await fx.clock.advance(59_999);
      await turns(20);
      assert.equal((await fx.inner.runs.get(h.id))!.status, 'waiting');
      assert.equal(fx.counter.count('runs.claim'), claims, 'not executed before wakeAt');
      // A wake-up 1 ms early (an unrelated event) replays the run, which goes back to sleep.
      await fx.engine.sendEvent(h.id, 'unrelated', null);
      const again = await waitForIdle(fx.inner, h.id);
      assert.equal(fx.counter.count('runs.claim'), claims + 1);
      assert.equal(again.status, 'waiting');
      assert.equal(again.wakeAt, start + 60_000);
      assert.equal(after, 0);
      await fx.clock.advance(1);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 'rested');
      assert.equal(after, 1);
      assert.equal((await fx.inner.steps.load(h.id))[0]!.status, 'succeeded');
    } finally {
      await fx.engine.stop();
    }
  });

  it('sleepUntil suspends until the given time (Date or epoch ms); a past time does not suspend', async () => {
    const wf = defineWorkflow('until', async (ctx) => {
      const now = await ctx.now();
      await ctx.sleepUntil('past', now - 1000);
      await ctx.sleepUntil('date', new Date(now + 5000));
      await ctx.sleepUntil('epoch', now + 7000);
      return (await ctx.now()) - now;
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const start = fx.clock.now();
      const h = await fx.engine.startRun(wf, null);
      let run = await waitForIdle(fx.inner, h.id);
      assert.equal(run.status, 'waiting');
      assert.equal(run.wakeAt, start + 5000);
      await fx.clock.advance(5000);
      run = await waitForIdle(fx.inner, h.id);
      assert.equal(run.status, 'waiting');
      assert.equal(run.wakeAt, start + 7000);
      await fx.clock.advance(2000);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 7000);
      const steps = await fx.inner.steps.load(h.id);
      assert.deepEqual(
        steps.map((s) => [s.key, s.kind, s.status]),
        [
          ['$now', 'now', 'succeeded'],
          ['past', 'sleep', 'succeeded'],
          ['date', 'sleep', 'succeeded'],
          ['epoch', 'sleep', 'succeeded'],
          ['$now#2', 'now', 'succeeded'],
        ],
      );
    } finally {
      await fx.engine.stop();
    }
  });

  it('invalid durations and times are refused with INVALID_INPUT before anything is recorded', async () => {
    const bad: Array<[string, (ctx: WorkflowContext) => Promise<unknown>]> = [
      ['negative sleep', (ctx) => ctx.sleep('a', -1)],
      ['unparseable sleep', (ctx) => ctx.sleep('b', 'soon' as Duration)],
      ['NaN sleep', (ctx) => ctx.sleep('c', Number.NaN)],
      ['infinite sleep', (ctx) => ctx.sleep('d', Number.POSITIVE_INFINITY)],
      ['NaN sleepUntil', (ctx) => ctx.sleepUntil('e', Number.NaN)],
      ['invalid Date', (ctx) => ctx.sleepUntil('f', new Date('nope'))],
      ['string sleepUntil', (ctx) => ctx.sleepUntil('g', 'tomorrow' as unknown as number)],
      ['negative event timeout', (ctx) => ctx.waitForEvent('h', { timeout: '-5s' })],
      ['bad step timeout', (ctx) => ctx.step('i', () => 1, { timeout: 'abc' as Duration })],
      ['bad backoff delay', (ctx) => ctx.step('j', () => 1, { retries: 1, backoff: { type: 'fixed', delay: -1 } })],
    ];
    const codes: string[] = [];
    const wf = defineWorkflow('durations', async (ctx) => {
      for (const [label, call] of bad) {
        try {
          await call(ctx);
          codes.push(`${label}: accepted`);
        } catch (error) {
          codes.push(`${label}: ${(error as CairnError).code}`);
        }
      }
      return ctx.step('ok', () => 'ok');
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      assert.equal(await h.result(), 'ok');
      assert.deepEqual(
        codes,
        bad.map(([label]) => `${label}: INVALID_INPUT`),
      );
      assert.deepEqual(
        (await fx.inner.steps.load(h.id)).map((s) => [s.key, s.seq]),
        [['ok', 0]],
      );
      await rejectsWithCode(fx.engine.result(h.id, { timeout: 'abc' as Duration }), 'INVALID_INPUT');
      await rejectsWithCode(fx.engine.result(h.id, { timeout: -1 }), 'INVALID_INPUT');
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('events', () => {
  const napThenWait = defineWorkflow('nap-then-wait', async (ctx) => {
    await ctx.sleep('nap', 1000);
    return ctx.waitForEvent('go');
  });

  it('an event sent before the run waits for it is kept and consumed when the wait is reached', async () => {
    const fx = await createFixture({ workflows: [napThenWait] });
    try {
      const h = await fx.engine.startRun(napThenWait, null);
      await waitForIdle(fx.inner, h.id);
      assert.deepEqual(await fx.engine.sendEvent(h.id, 'go', { ok: 1 }), { delivered: true, duplicate: false, seq: 1 });
      // The early event woke the run, which went back to sleep until the timer.
      const run = await waitForIdle(fx.inner, h.id);
      assert.equal(run.status, 'waiting');
      assert.equal(run.wakeAt, fx.clock.now() + 1000);
      await fx.clock.advance(1000);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.deepEqual(await h.result(), { ok: 1 });
    } finally {
      await fx.engine.stop();
    }
  });

  it('an event sent after the run waits wakes it; falsy payloads round-trip', async () => {
    const wf = defineWorkflow('waiter', async (ctx) => ctx.waitForEvent('go'));
    const fx = await createFixture({ workflows: [wf] });
    try {
      const payloads: Array<Json | undefined> = [0, false, '', null, undefined, { n: 0 }];
      for (const payload of payloads) {
        const h = await fx.engine.startRun(wf, null);
        const run = await waitForIdle(fx.inner, h.id);
        assert.equal(run.status, 'waiting');
        assert.equal(run.wakeAt, undefined, 'a wait without timeout has no timer');
        const [step] = await fx.inner.steps.load(h.id);
        assert.deepEqual([step!.key, step!.kind, step!.status], ['event:go', 'event', 'waiting']);
        assert.deepEqual(await fx.engine.sendEvent(h.id, 'go', payload as Json), { delivered: true, duplicate: false, seq: 1 });
        await waitForStatus(fx.inner, h.id, 'completed');
        assert.deepStrictEqual(await h.result(), payload === undefined ? null : payload);
      }
    } finally {
      await fx.engine.stop();
    }
  });

  it('an event delivered while the run is between reading events and suspending is not lost', async () => {
    const wf = defineWorkflow('race-wait', async (ctx) => ctx.waitForEvent('go'));
    const fx = await createFixture({ workflows: [wf] });
    try {
      let injected = false;
      // Deliver the event right after the engine found none, before it records its wait.
      fx.counter.intercept('events.get', async (original, runId: string, name: string, seq: number) => {
        const found = await original(runId, name, seq);
        if (!injected) {
          injected = true;
          assert.equal(found, undefined);
          assert.deepEqual(await fx.engine.sendEvent(runId, name, 'late'), { delivered: true, duplicate: false, seq: 1 });
        }
        return found;
      });
      const h = await fx.engine.startRun(wf, null);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 'late');
      assert.equal(injected, true);
    } finally {
      await fx.engine.stop();
    }
  });

  it('waitForEvent with a timeout throws EVENT_TIMEOUT into the workflow, which can catch it', async () => {
    const wf = defineWorkflow('timeout-caught', async (ctx) => {
      try {
        return await ctx.waitForEvent('go', { timeout: '1m' });
      } catch (error) {
        return `caught ${(error as CairnError).code}`;
      }
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const start = fx.clock.now();
      const h = await fx.engine.startRun(wf, null);
      const run = await waitForIdle(fx.inner, h.id);
      assert.equal(run.wakeAt, start + 60_000);
      await fx.clock.advance(59_999);
      await turns(20);
      assert.equal((await fx.inner.runs.get(h.id))!.status, 'waiting');
      await fx.clock.advance(1);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 'caught EVENT_TIMEOUT');
      const [step] = await fx.inner.steps.load(h.id);
      assert.equal(step!.status, 'failed');
      assert.equal(step!.error?.code, 'EVENT_TIMEOUT');
      // Too late: the run has ended.
      assert.deepEqual(await fx.engine.sendEvent(h.id, 'go', 1), { delivered: false, duplicate: false });
    } finally {
      await fx.engine.stop();
    }
  });

  it('an uncaught EVENT_TIMEOUT fails the run; an event before the deadline wins over the timer', async () => {
    const wf = defineWorkflow('timeout-uncaught', async (ctx) => ctx.waitForEvent('go', { timeout: 5000 }));
    const fx = await createFixture({ workflows: [wf] });
    try {
      const late = await fx.engine.startRun(wf, null);
      const early = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, late.id);
      await waitForIdle(fx.inner, early.id);
      await fx.clock.advance(4999);
      await fx.engine.sendEvent(early.id, 'go', 'in time');
      await waitForStatus(fx.inner, early.id, 'completed');
      await fx.clock.advance(1);
      await waitForStatus(fx.inner, late.id, 'failed');
      assert.equal(await early.result(), 'in time');
      const err = await rejectsWithCode(late.result(), 'RUN_FAILED');
      assert.deepEqual(codeChain(err), ['RUN_FAILED', 'EVENT_TIMEOUT']);
      // The early run's timer fired too, after it ended: nothing changed.
      assert.equal((await fx.inner.runs.get(early.id))!.status, 'completed');
    } finally {
      await fx.engine.stop();
    }
  });

  it('every send of a name is kept: the first wait takes the first message, later sends are numbered on', async () => {
    const fx = await createFixture({ workflows: [napThenWait] });
    try {
      const h = await fx.engine.startRun(napThenWait, null);
      await waitForIdle(fx.inner, h.id);
      assert.deepEqual(await fx.engine.sendEvent(h.id, 'go', 'first'), { delivered: true, duplicate: false, seq: 1 });
      assert.deepEqual(await fx.engine.sendEvent(h.id, 'go', 'second'), { delivered: true, duplicate: false, seq: 2 });
      assert.deepEqual(await fx.engine.sendEvent(h.id, 'other', 'x'), { delivered: true, duplicate: false, seq: 1 }, 'another name is numbered on its own');
      await waitForIdle(fx.inner, h.id);
      await fx.clock.advance(1000);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 'first');
      assert.deepEqual(await fx.engine.sendEvent(h.id, 'go', 'third'), { delivered: false, duplicate: false });
      assert.equal((await fx.inner.events.get(h.id, 'go', 1))?.payload, 'first');
      assert.equal((await fx.inner.events.get(h.id, 'go', 2))?.payload, 'second');
    } finally {
      await fx.engine.stop();
    }
  });

  it('sendEvent refuses a missing run (RUN_NOT_FOUND), a bad name and a non-JSON payload, writing nothing', async () => {
    const fx = await createFixture({ workflows: [napThenWait] });
    try {
      await rejectsWithCode(fx.engine.sendEvent('0190f3d2-0000-7000-8000-000000000000', 'go', 1), 'RUN_NOT_FOUND');
      const h = await fx.engine.startRun(napThenWait, null);
      await waitForIdle(fx.inner, h.id);
      await rejectsWithCode(fx.engine.sendEvent(h.id, '', 1), 'INVALID_INPUT');
      await rejectsWithCode(fx.engine.sendEvent(h.id, 'go', (() => 1) as unknown as Json), 'NOT_SERIALIZABLE');
      await rejectsWithCode(fx.engine.sendEvent(h.id, 'go', { n: 10n } as unknown as Json), 'NOT_SERIALIZABLE');
      await rejectsWithCode(fx.engine.sendEvent(h.id, 'go#2', 1), 'INVALID_INPUT');
      await rejectsWithCode(fx.engine.sendEvent(h.id, 'go', 1, { idempotencyKey: '' }), 'INVALID_INPUT');
      await rejectsWithCode(fx.engine.sendEvent(h.id, 'go', 1, { idempotencykey: 'k' } as never), 'INVALID_INPUT');
      assert.equal(await fx.inner.events.get(h.id, 'go', 1), undefined);
      assert.deepEqual(await fx.engine.sendEvent(h.id, 'go', 'valid'), { delivered: true, duplicate: false, seq: 1 });
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('waiting for results', () => {
  it('result() with a timeout throws RESULT_TIMEOUT and leaves the run alone', async () => {
    const wf = defineWorkflow('slow-result', async (ctx) => ctx.waitForEvent('go'));
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      const pending = h.result({ timeout: '5s' });
      let settled = false;
      pending.then(
        () => (settled = true),
        () => (settled = true),
      );
      await fx.clock.advance(4999);
      await turns(10);
      assert.equal(settled, false);
      await fx.clock.advance(1);
      await rejectsWithCode(pending, 'RESULT_TIMEOUT');
      assert.equal((await fx.inner.runs.get(h.id))!.status, 'waiting');
      await rejectsWithCode(fx.engine.result('0190f3d2-0000-7000-8000-000000000000'), 'RUN_NOT_FOUND');
    } finally {
      await fx.engine.stop();
    }
  });

  it('a result from another process is polled with backoff (from ~10 ms, capped by pollIntervalMs)', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const wf = defineWorkflow('remote-result', async (ctx) => ctx.waitForEvent('go'));
    const worker = await createFixture({ workflows: [wf], clock, counter, workerId: 'worker' });
    const observerCounter = countingStore(counter.inner);
    const observer = await createFixture({ workflows: [wf], clock, counter: observerCounter, workerId: 'observer', start: false, pollIntervalMs: 1000 });
    try {
      const h = await worker.engine.startRun(wf, null);
      await waitForIdle(counter.inner, h.id);
      observerCounter.reset();
      let value: unknown;
      const pending = observer.engine.result(h.id).then((v) => (value = v));
      // 60 s of waiting: 10, 20, 40, ... 640 ms, then every second.
      for (let i = 0; i < 600; i++) await clock.advance(100);
      const polls = observerCounter.count('runs.get');
      assert.ok(polls >= 55 && polls <= 75, `polls in 60 s: ${polls}`);
      await worker.engine.sendEvent(h.id, 'go', 'done');
      await waitForStatus(counter.inner, h.id, 'completed');
      await clock.advance(1000);
      await until(() => value !== undefined, 'the observer sees the result');
      await pending;
      assert.equal(value, 'done');
    } finally {
      await worker.engine.stop();
      await observer.engine.stop();
    }
  });
});
