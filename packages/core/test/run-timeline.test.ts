// engine.timeline: a run's steps, attempts, waits, children and state as plain JSON, built from
// four store reads whatever the number of steps.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineWorkflow, NonRetryableError } from '@cairn/core';
import { createFixture, rejectsWithCode, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

const child = defineWorkflow('tl-child', async (ctx, input: { n: number }) => ctx.step('double', () => input.n * 2));
const parent = defineWorkflow('tl-parent', async (ctx) => {
  let calls = 0;
  await ctx.step(
    'flaky',
    () => {
      calls += 1;
      if (calls < 3) throw new Error(`boom ${calls}`);
      return 'ok';
    },
    { retries: 2, backoff: { type: 'fixed', delay: 0 } },
  );
  await ctx.setState('phase', 'paid');
  await ctx.sleep('nap', '1m');
  const approval = await ctx.waitForEvent('approval', { timeout: '1h' });
  const doubled = await ctx.child(child, { n: 21 });
  const detached = await ctx.startChild(child, { n: 1 });
  return { approval, doubled, detached };
});

describe('engine.timeline', () => {
  it('shows every step with its attempts and waits, the children, the state, from 4 store reads', async () => {
    const fx = await createFixture({ workflows: [parent, child] });
    try {
      const t0 = fx.clock.now();
      const h = await fx.engine.startRun(parent, null);
      await waitForIdle(fx.inner, h.id);
      await fx.clock.advance(60_000);
      await waitForIdle(fx.inner, h.id);
      await fx.engine.sendEvent(h.id, 'approval', { by: 'Ada' });
      await waitForStatus(fx.inner, h.id, 'completed');
      fx.counter.reset();
      const timeline = await fx.engine.timeline(h.id);
      assert.deepEqual(fx.counter.counts(), { 'runs.get': 1, 'steps.load': 1, 'history.list': 1, 'state.get': 1 });

      assert.equal(timeline.run.status, 'completed');
      assert.equal(timeline.run.workflow, 'tl-parent');
      assert.equal(typeof timeline.run.durationMs, 'number');
      assert.deepEqual(
        timeline.steps.map((s) => [s.key, s.kind, s.status]),
        [
          ['flaky', 'task', 'succeeded'],
          ['nap', 'sleep', 'succeeded'],
          ['event:approval', 'event', 'succeeded'],
          ['child:tl-child', 'child', 'succeeded'],
          ['startChild:tl-child', 'child', 'succeeded'],
        ],
      );
      const [flaky, nap, approval, awaited, detached] = timeline.steps;
      assert.deepEqual(
        flaky?.attempts.map((a) => [a.attempt, a.status, a.error?.message]),
        [
          [1, 'failed', 'boom 1'],
          [2, 'failed', 'boom 2'],
          [3, 'succeeded', undefined],
        ],
      );
      assert.equal(flaky?.maxAttempts, 3);
      assert.deepEqual(nap?.wait, { kind: 'sleep', until: t0 + 60_000 });
      assert.deepEqual(approval?.wait, { kind: 'event', event: 'approval', received: { by: 'Ada' } });
      assert.equal(awaited?.wait?.kind, 'child');
      assert.equal(detached?.wait, undefined);
      assert.deepEqual(
        timeline.children.map((c) => [c.stepKey, c.relation]),
        [
          ['child:tl-child', 'child'],
          ['startChild:tl-child', 'detached'],
        ],
      );
      assert.equal(timeline.children[0]?.runId, awaited?.wait?.kind === 'child' ? awaited.wait.childRunId : '');
      assert.deepEqual(timeline.state, { phase: 'paid' });
      assert.ok(timeline.span.to >= timeline.span.from);
      // Plain JSON: a round trip changes nothing.
      assert.deepEqual(JSON.parse(JSON.stringify(timeline)), timeline);

      const childTimeline = await fx.engine.timeline(timeline.children[0]!.runId);
      assert.deepEqual(childTimeline.run.parent, { runId: h.id, stepKey: 'child:tl-child' });
    } finally {
      await fx.engine.stop();
    }
  });

  it('a failed run: its error, the failed attempt, a timed-out event wait; a cancelled run: its reason', async () => {
    const failing = defineWorkflow('tl-failing', async (ctx) => {
      await ctx.waitForEvent('never', { timeout: '1s' }).catch(() => null);
      await ctx.step('pay', () => {
        throw new NonRetryableError('card declined');
      });
    });
    const waiting = defineWorkflow('tl-waiting', async (ctx) => ctx.waitForEvent('go'));
    const fx = await createFixture({ workflows: [failing, waiting] });
    try {
      const h = await fx.engine.startRun(failing, null);
      await waitForIdle(fx.inner, h.id);
      await fx.clock.advance(1000);
      await waitForStatus(fx.inner, h.id, 'failed');
      const timeline = await fx.engine.timeline(h.id);
      assert.match(timeline.run.error?.message ?? '', /card declined/);
      const [never, pay] = timeline.steps;
      assert.equal(never?.wait?.kind === 'event' && never.wait.timedOut, true);
      assert.deepEqual(
        pay?.attempts.map((a) => [a.status, a.error?.message]),
        [['failed', 'card declined']],
      );

      const w = await fx.engine.startRun(waiting, null);
      await waitForIdle(fx.inner, w.id);
      const open = await fx.engine.timeline(w.id);
      assert.equal(open.run.status, 'waiting');
      assert.deepEqual(open.steps[0]?.wait, { kind: 'event', event: 'go' });
      assert.equal(open.steps[0]?.endedAt, undefined);
      await fx.engine.cancel(w.id, { reason: 'not needed' });
      await waitForStatus(fx.inner, w.id, 'cancelled');
      const cancelled = await fx.engine.timeline(w.id);
      assert.equal(cancelled.run.cancelReason, 'not needed');
      assert.equal(cancelled.run.cancelRequested, true);
    } finally {
      await fx.engine.stop();
    }
  });

  it('refuses a malformed id (INVALID_INPUT) and answers RUN_NOT_FOUND for an unknown one, reading nothing for the former', async () => {
    const fx = await createFixture({ workflows: [parent, child] });
    try {
      fx.counter.reset();
      await rejectsWithCode(fx.engine.timeline(42 as unknown as string), 'INVALID_INPUT');
      assert.deepEqual(fx.counter.counts(), {});
      await rejectsWithCode(fx.engine.timeline('no-such-run'), 'RUN_NOT_FOUND');
    } finally {
      await fx.engine.stop();
    }
  });
});
