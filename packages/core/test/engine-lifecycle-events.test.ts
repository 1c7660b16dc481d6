import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, it } from 'node:test';
import { CAIRN_CHANNELS, createEngine, createMemoryStore, defineWorkflow, type RunLifecycleEvent, type StepLifecycleEvent } from '@cairn/core';
import type { RecoveryLifecycleEvent } from '@cairn/core/backend';

const until = async (what: () => boolean, label: string) => {
  for (let i = 0; i < 1000 && !what(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(what(), `${label}: not reached`);
};

/** Collects every message of the run and step channels while `body` runs. */
async function recording<T>(body: (runs: RunLifecycleEvent[], steps: StepLifecycleEvent[]) => Promise<T>): Promise<T> {
  const runs: RunLifecycleEvent[] = [];
  const steps: StepLifecycleEvent[] = [];
  const onRun = (message: unknown) => void runs.push(message as RunLifecycleEvent);
  const onStep = (message: unknown) => void steps.push(message as StepLifecycleEvent);
  subscribe(CAIRN_CHANNELS.run, onRun);
  subscribe(CAIRN_CHANNELS.step, onStep);
  try {
    return await body(runs, steps);
  } finally {
    unsubscribe(CAIRN_CHANNELS.run, onRun);
    unsubscribe(CAIRN_CHANNELS.step, onStep);
  }
}

const describeRun = (e: RunLifecycleEvent) => (e.type === 'run.suspended' ? `${e.type}:${e.reasons.join('+')}` : e.type);
const describeStep = (e: StepLifecycleEvent) => `${e.type}:${e.stepKey}#${e.attempt}${e.queued ? ':queued' : ''}`;

describe('lifecycle events on node:diagnostics_channel', () => {
  it('a run with a retried step, a sleep, an event, a child and a queued step publishes its exact sequence', async () => {
    let fails = 0;
    const child = defineWorkflow('lc-child', async (ctx) => {
      await ctx.waitForEvent('go');
      return ctx.step('double', () => 42);
    });
    const parent = defineWorkflow(
      'lc-parent',
      async (ctx) => {
        await ctx.step(
          'flaky',
          () => {
            if (fails++ === 0) throw new Error('first attempt fails');
            return 1;
          },
          { retries: 2, backoff: { type: 'fixed', delay: 5 } },
        );
        await ctx.sleep('nap', 20);
        await ctx.waitForEvent('approve');
        const c = await ctx.child(child, null);
        const q = await ctx.step('remote', () => 'q', { queued: true });
        return { c, q };
      },
      { version: '7' },
    );
    const engine = createEngine({ store: createMemoryStore(), workflows: [parent, child], recoveryIntervalMs: 60_000, workerId: 'lc-worker' });
    await engine.start();
    try {
      await recording(async (runs, steps) => {
        const { id } = await engine.startRun(parent, null);
        const suspendedOn = (runId: string, reason: string) => () =>
          runs.some((e) => e.runId === runId && e.type === 'run.suspended' && e.reasons.includes(reason as never));
        await until(suspendedOn(id, 'event'), 'the parent waits for its event');
        await engine.sendEvent(id, 'approve', {});
        await until(suspendedOn(id, 'child'), 'the parent waits for its child');
        const childId = runs.find((e) => e.type === 'run.created' && e.parentRunId === id)!.runId;
        await until(suspendedOn(childId, 'event'), 'the child waits for its event');
        await engine.sendEvent(childId, 'go', {});
        assert.deepEqual(await engine.result(id, { timeout: '10s' }), { c: 42, q: 'q' });

        const ofParent = runs.filter((e) => e.runId === id);
        assert.deepEqual(ofParent.map(describeRun), [
          'run.created',
          'run.started',
          'run.suspended:sleep',
          'run.resumed',
          'run.suspended:event',
          'run.resumed',
          'run.suspended:child',
          'run.resumed',
          'run.suspended:queued-step',
          'run.resumed',
          'run.completed',
        ]);
        assert.deepEqual(runs.filter((e) => e.runId === childId).map(describeRun), [
          'run.created',
          'run.started',
          'run.suspended:event',
          'run.resumed',
          'run.completed',
        ]);
        assert.deepEqual(steps.filter((e) => e.runId === id).map(describeStep), [
          'step.started:flaky#1',
          'step.retry-scheduled:flaky#1',
          'step.started:flaky#2',
          'step.succeeded:flaky#2',
          'step.started:remote#1:queued',
          'step.succeeded:remote#1:queued',
        ]);
        // Every message names its run, workflow, version and worker; fences grow with each claim.
        for (const e of [...ofParent, ...steps.filter((s) => s.runId === id)]) {
          assert.equal(e.workflow, 'lc-parent');
          assert.equal(e.version, '7');
          assert.equal(e.workerId, 'lc-worker');
          assert.equal(typeof e.at, 'number');
        }
        const fences = ofParent.flatMap((e) => (e.type === 'run.started' || e.type === 'run.resumed' ? [e.fence] : []));
        assert.deepEqual(fences, [1, 2, 3, 4, 5]);
        const retry = steps.find((e) => e.type === 'step.retry-scheduled')!;
        assert.ok(retry.type === 'step.retry-scheduled' && retry.delayMs === 5 && retry.error.message === 'first attempt fails');
        const completed = ofParent.at(-1)!;
        assert.ok(completed.type === 'run.completed' && completed.totalMs >= completed.durationMs);
        assert.equal(
          runs.find((e) => e.runId === childId && e.type === 'run.created')?.type === 'run.created' &&
            (runs.find((e) => e.runId === childId && e.type === 'run.created') as { parentRunId?: string }).parentRunId,
          id,
        );
        // No message carries a payload.
        for (const e of [...runs, ...steps]) for (const key of ['input', 'output', 'payload']) assert.ok(!(key in e), `${e.type} carries ${key}`);
      });
    } finally {
      await engine.stop();
    }
  });

  it('a failed run and the compensation of its succeeded step are published', async () => {
    const wf = defineWorkflow('lc-saga', async (ctx) => {
      await ctx.step('book', () => 'booked', { compensate: () => undefined });
      await ctx.step('charge', () => {
        throw new Error('card declined');
      });
    });
    const engine = createEngine({ store: createMemoryStore(), workflows: [wf], recoveryIntervalMs: 60_000 });
    await engine.start();
    try {
      await recording(async (runs, steps) => {
        const { id } = await engine.startRun(wf, null);
        await assert.rejects(engine.result(id, { timeout: '10s' }));
        assert.deepEqual(runs.map(describeRun), ['run.created', 'run.started', 'run.failed']);
        const failed = runs.at(-1)!;
        assert.ok(failed.type === 'run.failed' && /card declined/.test(failed.error?.message ?? ''));
        assert.deepEqual(steps.map(describeStep), [
          'step.started:book#1',
          'step.succeeded:book#1',
          'step.started:charge#1',
          'step.failed:charge#1',
          'step.started:book:compensate#1',
          'step.succeeded:book:compensate#1',
          'step.compensated:book#1',
        ]);
      });
    } finally {
      await engine.stop();
    }
  });

  it('a long backoff suspends the run for its retry; recovery publishes what it dispatched and why', async () => {
    let fails = 0;
    const wf = defineWorkflow('lc-backoff', async (ctx) =>
      ctx.step(
        'slow-retry',
        () => {
          if (fails++ === 0) throw new Error('try later');
          return 1;
        },
        // 1 s against an inline-retry limit of 10 ms: the engine retries in place when what is left
        // of the backoff at its decision is under the limit, and on a loaded machine 50 ms could
        // pass between the failure and the decision (CI at load 20 saw the run complete unsuspended).
        { retries: 1, backoff: { type: 'fixed', delay: 1000 } },
      ),
    );
    const store = createMemoryStore();
    // A run due at once that no worker of this engine takes: only recovery dispatches it.
    const submitter = createEngine({ store, workflows: [wf], recoveryIntervalMs: 60_000, timings: { startGraceMs: 0 } });
    await submitter.start({ workers: false });
    const engine = createEngine({ store, workflows: [wf], recoveryIntervalMs: 60_000, workerId: 'lc-recovery', timings: { inlineRetryMaxMs: 10 } });
    await engine.start();
    const recovered: RecoveryLifecycleEvent[] = [];
    const onRecovery = (message: unknown) => void recovered.push(message as RecoveryLifecycleEvent);
    subscribe(CAIRN_CHANNELS.recovery, onRecovery);
    try {
      await recording(async (runs) => {
        const { id } = await submitter.startRun(wf, null);
        assert.equal(await engine.recover(), 1);
        assert.deepEqual(
          recovered.map((e) => [e.type, e.runId, e.reason, e.workerId]),
          [['recovery.dispatched', id, 'wake', 'lc-recovery']],
        );
        assert.equal(await engine.result(id, { timeout: '10s' }), 1);
        // How often the run is resumed before its retry is due depends on timers; every suspension is for the retry.
        const sequence = runs.filter((e) => e.runId === id).map(describeRun);
        assert.deepEqual([sequence.slice(0, 3), sequence.at(-1)], [['run.created', 'run.started', 'run.suspended:retry'], 'run.completed']);
        assert.deepEqual([...new Set(sequence.slice(2, -1))].sort(), ['run.resumed', 'run.suspended:retry']);
      });
    } finally {
      unsubscribe(CAIRN_CHANNELS.recovery, onRecovery);
      await Promise.all([submitter.stop(), engine.stop()]);
    }
  });

  it('a worker whose run was taken over publishes run.lease-lost', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wf = defineWorkflow('lc-lease', async (ctx) => ctx.step('hold', () => gate));
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [wf], recoveryIntervalMs: 60_000, workerId: 'lc-loser', timings: { leaseMs: 300 } });
    await engine.start();
    try {
      await recording(async (runs) => {
        const { id } = await engine.startRun(wf, null, { mode: 'inline' });
        await until(() => runs.some((e) => e.runId === id && e.type === 'run.started'), 'the run is claimed');
        // Another worker takes the run over as if the lease had run out.
        const taken = await store.runs.claim(id, 'lc-winner', 60_000, Date.now() + 1_000);
        assert.ok(taken);
        await until(() => runs.some((e) => e.type === 'run.lease-lost'), 'the loser notices at its next renewal');
        const lost = runs.find((e) => e.type === 'run.lease-lost')!;
        assert.ok(lost.type === 'run.lease-lost' && lost.runId === id && lost.workerId === 'lc-loser' && lost.error.code === 'LEASE_LOST');
        release();
      });
    } finally {
      release();
      await engine.stop({ graceMs: 1000 });
    }
  });
});
