import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createLocalQueue, defineWorkflow } from '@cairn/core';
import { ManualClock } from '@cairn/core/testing';
import { codeChain, createFixture, gate, rejectsWithCode, until, waitForStatus, waitForStep } from './helpers/engine-fixture.js';

const LEASE_MS = 30_000;

describe('cancel reasons', () => {
  it('the reason reaches the running inline body, ctx.signal, later primitives, the run error and the children', async () => {
    const inBody = gate<AbortSignal>();
    const caught: unknown[] = [];
    let ctxReason: unknown;
    const kid = defineWorkflow('reason-kid', async (ctx) => ctx.sleep('nap', '1h'));
    const wf = defineWorkflow('reason-parent', async (ctx) => {
      const child = ctx.child(kid, null);
      child.catch(() => undefined);
      await ctx
        .step('slow', (s) => {
          inBody.open(s.signal);
          return new Promise((_resolve, reject) => s.signal.addEventListener('abort', () => reject(s.signal.reason)));
        })
        .catch((error: unknown) => caught.push(error));
      ctxReason = ctx.signal.reason;
      await ctx.step('later', () => 1).catch((error: unknown) => caught.push(error));
    });
    const fx = await createFixture({ workflows: [wf, kid] });
    try {
      const h = await fx.engine.startRun(wf, null);
      const signal = await inBody.promise;
      const childId = (await waitForStep(fx.inner, h.id, 'child:reason-kid', 'waiting')).childRunId!;
      await fx.engine.cancel(h.id, { reason: 'order withdrawn' });
      assert.equal(signal.aborted, true, 'aborted at once in the same process');
      assert.ok(CairnError.is(signal.reason, 'CANCELLED'));
      assert.equal(signal.reason.message, `Run ${h.id} was cancelled: order withdrawn`);
      assert.deepEqual(signal.reason.data, { runId: h.id, reason: 'order withdrawn' });
      const run = await waitForStatus(fx.inner, h.id, ['cancelled', 'failed', 'completed']);
      assert.equal(run.status, 'cancelled');
      assert.equal(run.cancelReason, 'order withdrawn');
      assert.deepEqual(run.error?.data, { runId: h.id, reason: 'order withdrawn' });
      assert.equal(ctxReason, signal.reason);
      assert.equal(caught.length, 2);
      for (const error of caught) assert.equal(error, signal.reason, 'the body and the later primitive throw the same CANCELLED');
      const child = await waitForStatus(fx.inner, childId, ['cancelled', 'failed', 'completed']);
      assert.equal(child.status, 'cancelled');
      assert.equal(child.cancelReason, 'order withdrawn', 'children are cancelled with the same reason');
      const err = await rejectsWithCode(h.result(), 'RUN_CANCELLED');
      assert.deepEqual(codeChain(err), ['RUN_CANCELLED', 'CANCELLED']);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a queued body in this process learns of the cancel at the next check, a third of the lease later', async () => {
    const inBody = gate<AbortSignal>();
    const wf = defineWorkflow('reason-queued', async (ctx) => {
      await ctx.step(
        'slow',
        (s) => {
          inBody.open(s.signal);
          return new Promise((_resolve, reject) => s.signal.addEventListener('abort', () => reject(s.signal.reason)));
        },
        { queued: true },
      );
    });
    const fx = await createFixture({ workflows: [wf], timings: { leaseMs: LEASE_MS } });
    try {
      const h = await fx.engine.startRun(wf, null);
      const signal = await inBody.promise;
      await fx.engine.cancel(h.id, { reason: 'stop it' });
      await waitForStatus(fx.inner, h.id, 'cancelled');
      assert.equal(signal.aborted, false, 'the step worker has not looked yet');
      await fx.clock.advance(LEASE_MS / 3 - 1);
      await until(() => true);
      assert.equal(signal.aborted, false);
      await fx.clock.advance(1);
      await until(() => signal.aborted, 'the body aborts at the check');
      assert.ok(CairnError.is(signal.reason, 'CANCELLED'));
      assert.match(signal.reason.message, /stop it/);
      const step = (await fx.inner.steps.load(h.id))[0];
      assert.equal(step?.status, 'running', 'the aborted attempt records nothing');
    } finally {
      await fx.engine.stop();
    }
  });

  it('bad reasons are refused with INVALID_INPUT before anything is written', async () => {
    const wf = defineWorkflow('reason-bad', async (ctx) => ctx.sleep('nap', '1h'));
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      for (const reason of ['', 'a\u0000b', 'x'.repeat(1001), '\uD800', 7, null]) {
        await rejectsWithCode(fx.engine.cancel(h.id, { reason: reason as string }), 'INVALID_INPUT');
      }
      assert.equal((await fx.inner.runs.get(h.id))?.cancelRequested, false);
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('deadlines', () => {
  it('at the deadline the inline body aborts with DEADLINE_EXCEEDED, later primitives throw it, the run fails with it', async () => {
    const inBody = gate<AbortSignal>();
    const caught: string[] = [];
    const wf = defineWorkflow('deadline-inline', async (ctx) => {
      await ctx
        .step('slow', (s) => {
          inBody.open(s.signal);
          return new Promise((_resolve, reject) => s.signal.addEventListener('abort', () => reject(s.signal.reason)));
        })
        .catch((error: CairnError) => caught.push(error.code));
      await ctx.step('later', () => 1).catch((error: CairnError) => caught.push(error.code));
      return 'went on';
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const start = fx.clock.now();
      const h = await fx.engine.startRun(wf, null, { deadline: '10s', mode: 'inline' });
      assert.equal((await fx.inner.runs.get(h.id))?.deadline, start + 10_000);
      const signal = await inBody.promise;
      await fx.clock.advance(9_999);
      await until(() => true);
      assert.equal(signal.aborted, false);
      await fx.clock.advance(1);
      const run = await waitForStatus(fx.inner, h.id, ['failed', 'completed', 'cancelled']);
      assert.ok(CairnError.is(signal.reason, 'DEADLINE_EXCEEDED'));
      assert.equal(run.status, 'failed');
      assert.equal(run.error?.code, 'DEADLINE_EXCEEDED');
      assert.deepEqual(run.error?.data, { runId: h.id, deadline: start + 10_000 });
      assert.deepEqual(caught, ['DEADLINE_EXCEEDED', 'DEADLINE_EXCEEDED']);
      const err = await rejectsWithCode(h.result(), 'RUN_FAILED');
      assert.deepEqual(codeChain(err), ['RUN_FAILED', 'DEADLINE_EXCEEDED']);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a run whose deadline passed before any worker claimed it fails at its first claim, running nothing', async () => {
    let ran = 0;
    const wf = defineWorkflow('deadline-past', async (ctx) => ctx.step('s', () => (ran += 1)));
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null, { deadline: new Date(fx.clock.now() - 1) });
      const run = await waitForStatus(fx.inner, h.id, ['failed', 'completed']);
      assert.equal(run.error?.code, 'DEADLINE_EXCEEDED');
      assert.equal(ran, 0);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a new run is due no later than its deadline, so recovery fails it even if its first job is lost', async () => {
    const wf = defineWorkflow('deadline-due', async (ctx) => ctx.sleep('nap', '1h'));
    // Its first job goes to a queue that nothing consumes (one passed in, so the engine does not
    // send through the store as it does over a local queue of its own when not started; see
    // engine-store-dispatch): the run keeps the start grace period, cut to its deadline.
    const clock = new ManualClock();
    const fx = await createFixture({ workflows: [wf], start: 'no', clock, queue: createLocalQueue({ clock }) });
    try {
      const start = fx.clock.now();
      const h = await fx.engine.startRun(wf, null, { deadline: '5s' });
      assert.equal((await fx.inner.runs.get(h.id))?.wakeAt, start + 5_000);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a child gets the earlier of its parent deadline and its own default', async () => {
    const early = defineWorkflow('deadline-kid-early', async (ctx) => ctx.sleep('nap', '1h'), { deadline: '1m' });
    const late = defineWorkflow('deadline-kid-late', async (ctx) => ctx.sleep('nap', '1h'), { deadline: '1d' });
    const wf = defineWorkflow('deadline-parent', async (ctx) => {
      await Promise.all([ctx.child(early, null), ctx.child(late, null)]);
    });
    const fx = await createFixture({ workflows: [wf, early, late] });
    try {
      const start = fx.clock.now();
      const h = await fx.engine.startRun(wf, null, { deadline: '1h' });
      const a = await waitForStep(fx.inner, h.id, 'child:deadline-kid-early', 'waiting');
      const b = await waitForStep(fx.inner, h.id, 'child:deadline-kid-late', 'waiting');
      assert.equal((await fx.inner.runs.get(a.childRunId!))?.deadline, start + 60_000);
      assert.equal((await fx.inner.runs.get(b.childRunId!))?.deadline, start + 3_600_000);
    } finally {
      await fx.engine.stop();
    }
  });

  it('bad deadlines are refused with INVALID_INPUT', async () => {
    assert.throws(
      () => defineWorkflow('bad-deadline', async () => 1, { deadline: '1 hour' as never }),
      (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
    );
    assert.throws(
      () => defineWorkflow('bad-deadline', async () => 1, { deadline: new Date() as never }),
      (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
    );
    const wf = defineWorkflow('deadline-bad', async () => 1);
    const fx = await createFixture({ workflows: [wf] });
    try {
      for (const deadline of ['-1s', Number.NaN, Infinity, '101y', 4e12, new Date(Number.NaN), new Date(fx.clock.now() + 4e12), null, {}]) {
        await rejectsWithCode(fx.engine.startRun(wf, null, { deadline: deadline as never }), 'INVALID_INPUT');
      }
      assert.equal((await fx.inner.runs.list({})).runs.length, 0);
    } finally {
      await fx.engine.stop();
    }
  });
});
