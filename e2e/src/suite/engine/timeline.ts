import assert from 'node:assert/strict';
import { defineWorkflow, NonRetryableError } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from './engine-world.js';

const MINUTE = 60_000;

/** Engine scenarios: `engine.timeline`, the data the CLI and the dashboard render. */
export const timelineGroup: CaseGroup = caseGroup('engine.timeline', 'engine: run timelines', [
  conformanceCase('the timeline of a run with a retried step, a state change, a sleep, an event and a child is right, from 4 reads', async (env) => {
    let calls = 0;
    const child = defineWorkflow('timeline-child', async (ctx, n: number) => ctx.step('double', () => n * 2));
    const wf = defineWorkflow('timeline-parent', async (ctx) => {
      await ctx.step(
        'flaky',
        () => {
          calls += 1;
          if (calls === 1) throw new Error('first attempt fails');
          return 'paid';
        },
        { retries: 1, backoff: { type: 'fixed', delay: '1m' } },
      );
      await ctx.setState('phase', 'paid');
      await ctx.sleep('nap', '1h');
      const approval = await ctx.waitForEvent('approval');
      const doubled = await ctx.child(child, 21);
      return { approval, doubled };
    });
    const w = await engineWorld(env, [wf, child]);
    const handle = await w.engine.startRun(wf, null, { idempotencyKey: 'order-1' });
    await w.runUntil('the run waits for its event', async () =>
      (await w.raw.steps.load(handle.id)).some((s) => s.key === 'event:approval' && s.status === 'waiting'),
    );
    await w.engine.sendEvent(handle.id, 'approval', { by: 'Ada' });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed');

    await w.settle();
    w.store.reset();
    const timeline = await w.engine.timeline(handle.id);
    assert.deepEqual(w.store.counts(), { 'runs.get': 1, 'steps.load': 1, 'history.list': 1, 'state.get': 1 }, 'four reads, none per step');

    assert.deepEqual(
      {
        status: timeline.run.status,
        workflow: timeline.run.workflow,
        key: timeline.run.idempotencyKey,
        createdAt: timeline.run.createdAt,
        endedAt: timeline.run.endedAt,
      },
      { status: 'completed', workflow: 'timeline-parent', key: 'order-1', createdAt: run.createdAt, endedAt: run.updatedAt },
    );
    assert.deepEqual(timeline.run.output, { approval: { by: 'Ada' }, doubled: 42 });
    assert.deepEqual(
      timeline.steps.map((s) => [s.key, s.kind, s.status]),
      [
        ['flaky', 'task', 'succeeded'],
        ['nap', 'sleep', 'succeeded'],
        ['event:approval', 'event', 'succeeded'],
        ['child:timeline-child', 'child', 'succeeded'],
      ],
    );
    const [flaky, nap, approval, awaited] = timeline.steps;
    assert.deepEqual(
      flaky?.attempts.map((a) => [a.attempt, a.status, a.error?.message]),
      [
        [1, 'failed', 'first attempt fails'],
        [2, 'succeeded', undefined],
      ],
    );
    // The retry waited its backoff (1 min of the manual clock) between the two attempts.
    assert.ok((flaky?.attempts[1]?.startedAt ?? 0) - (flaky?.attempts[0]?.endedAt ?? 0) >= MINUTE, 'attempt 2 starts a backoff after attempt 1');
    assert.equal(flaky?.maxAttempts, 2);
    assert.equal(nap?.wait?.kind, 'sleep');
    assert.ok(nap?.wait?.kind === 'sleep' && nap.wait.until >= (flaky?.endedAt ?? 0) + 60 * MINUTE, 'the sleep ends an hour after it began');
    assert.deepEqual(approval?.wait, { kind: 'event', event: 'approval', received: { by: 'Ada' } });
    const childId = awaited?.wait?.kind === 'child' ? awaited.wait.childRunId : undefined;
    assert.ok(childId, 'the child step names its run');
    assert.deepEqual(timeline.children, [{ runId: childId, stepKey: 'child:timeline-child', relation: 'child', stepStatus: 'succeeded' }]);
    assert.deepEqual(timeline.state, { phase: 'paid' });
    for (const step of timeline.steps) assert.ok(step.endedAt !== undefined && step.endedAt >= step.startedAt, `${step.key} has an end not before its start`);
    assert.ok(timeline.span.from === run.createdAt && timeline.span.to >= run.updatedAt);
    assert.deepEqual(JSON.parse(JSON.stringify(timeline)), timeline, 'plain JSON');

    const childTimeline = await w.engine.timeline(childId);
    assert.deepEqual(childTimeline.run.parent, { runId: handle.id, stepKey: 'child:timeline-child' });
    assert.deepEqual(
      childTimeline.steps.map((s) => [s.key, s.status, s.attempts.length]),
      [['double', 'succeeded', 1]],
    );
  }),

  conformanceCase('an active run: open waits and a failed attempt waiting for its retry; a missing run is RUN_NOT_FOUND', async (env) => {
    const wf = defineWorkflow('timeline-open', async (ctx) => {
      await ctx.step(
        'always fails',
        () => {
          throw new Error('down');
        },
        { retries: 3, backoff: { type: 'fixed', delay: '1h' } },
      );
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the step waits for its retry', async () => (await w.raw.steps.load(handle.id))[0]?.status === 'retry_wait');
    await w.settle();
    const timeline = await w.engine.timeline(handle.id);
    assert.equal(timeline.run.endedAt, undefined);
    const [step] = timeline.steps;
    assert.equal(step?.status, 'retry_wait');
    assert.equal(step?.endedAt, undefined);
    assert.equal(step?.wait?.kind, 'retry');
    assert.deepEqual(
      step?.attempts.map((a) => [a.attempt, a.status, a.error?.message]),
      [[1, 'failed', 'down']],
    );
    await assert.rejects(w.engine.timeline('01a00000-0000-7000-8000-000000000000'), (error: Error & { code?: string }) => error.code === 'RUN_NOT_FOUND');
  }),

  conformanceCase('a retried run lists its retries, a fork names where it came from', async (env) => {
    let fail = true;
    const wf = defineWorkflow('timeline-retried', async (ctx) => {
      const a = await ctx.step('first', () => 1);
      const b = await ctx.step('second', () => {
        if (fail) throw new NonRetryableError('down');
        return 2;
      });
      return a + b;
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    assert.equal((await w.runToEnd(handle.id)).status, 'failed');
    fail = false;
    await w.engine.retryRun(handle.id, { reason: 'fixed the outage' });
    assert.equal((await w.runToEnd(handle.id)).status, 'completed');
    const retried = await w.engine.timeline(handle.id);
    assert.deepEqual(
      retried.run.retries?.map((r) => [r.previousStatus, r.previousError?.message.includes('down'), r.reason, r.forgottenSteps]),
      [['failed', true, 'fixed the outage', ['second']]],
    );
    assert.deepEqual(
      retried.steps.map((s) => [s.key, s.status]),
      [
        ['first', 'succeeded'],
        ['second', 'succeeded'],
      ],
    );

    const fork = await w.engine.forkRun(handle.id, { fromStep: 'second' });
    assert.equal((await w.runToEnd(fork.id)).status, 'completed');
    const forked = await w.engine.timeline(fork.id);
    assert.deepEqual(forked.run.forkedFrom, { runId: handle.id, stepKey: 'second' });
    assert.equal(forked.run.retries, undefined);
    assert.deepEqual(
      forked.steps.map((s) => [s.key, s.status]),
      [
        ['first', 'succeeded'],
        ['second', 'succeeded'],
      ],
    );
  }),
]);
