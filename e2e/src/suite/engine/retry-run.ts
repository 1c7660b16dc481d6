import assert from 'node:assert/strict';
import { defineWorkflow, NonRetryableError } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

/** `engine.retryRun` on every backend: resume from the failure, children, refusals, fencing, recording. */
export const retryRunGroup: CaseGroup = caseGroup('engine.retry-run', 'engine: retryRun', [
  conformanceCase(
    'a failed run resumes where it failed: succeeded steps are not run again, the failed one and those after it run; the retry is recorded',
    async (env) => {
      const calls = { a: 0, b: 0, c: 0 };
      let broken = true;
      const wf = defineWorkflow('retry-resume', async (ctx) => {
        const a = await ctx.step('a', () => ++calls.a);
        const b = await ctx.step('b', () => {
          calls.b += 1;
          if (broken) throw new NonRetryableError('b is broken');
          return 'fixed';
        });
        const c = await ctx.step('c', () => ++calls.c);
        return { a, b, c };
      });
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, null);
      const failed = await w.runToEnd(handle.id);
      assert.equal(failed.status, 'failed');
      broken = false;
      const reopened = await w.engine.retryRun(handle.id, { reason: 'b was fixed' });
      assert.equal(reopened.status, 'pending');
      assert.equal(reopened.fence, failed.fence + 1);
      const done = await w.runToEnd(handle.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.output, { a: 1, b: 'fixed', c: 1 });
      assert.deepEqual(calls, { a: 1, b: 2, c: 1 });
      assert.equal(done.retries?.length, 1);
      const [record] = done.retries ?? [];
      assert.equal(record?.previousStatus, 'failed');
      assert.equal(record?.previousError?.code, 'STEP_FAILED');
      assert.equal(record?.reason, 'b was fixed');
      assert.deepEqual(record?.forgottenSteps, ['b']);
      assert.deepEqual(
        (await w.engine.steps(handle.id)).map((s) => [s.key, s.status]),
        [
          ['a', 'succeeded'],
          ['b', 'succeeded'],
          ['c', 'succeeded'],
        ],
      );
    },
  ),

  conformanceCase('a cancelled run resumes: the cancel request and reason are cleared and its wait goes on', async (env) => {
    const wf = defineWorkflow('retry-cancelled', async (ctx) => {
      const first = await ctx.step('first', () => 'one');
      const message = await ctx.waitForEvent('go');
      return { first, message };
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits', async () => (await w.engine.getRun(handle.id))?.status === 'waiting');
    await w.engine.cancel(handle.id, { reason: 'by mistake' });
    assert.equal((await w.runToEnd(handle.id)).status, 'cancelled');
    const reopened = await w.engine.retryRun(handle.id);
    assert.equal(reopened.cancelRequested, false);
    assert.equal(reopened.cancelReason, undefined);
    await w.runUntil('the run waits again', async () => (await w.engine.getRun(handle.id))?.status === 'waiting');
    await w.engine.sendEvent(handle.id, 'go', 'now');
    const done = await w.runToEnd(handle.id);
    assert.deepEqual(done.output, { first: 'one', message: 'now' });
    assert.equal(done.retries?.[0]?.previousStatus, 'cancelled');
    assert.equal(done.retries?.[0]?.previousError?.code, 'CANCELLED');
  }),

  conformanceCase(
    'refused: RUN_CONFLICT for an active or completed run, RUN_NOT_FOUND for a missing one, INVALID_INPUT for bad arguments; nothing changes',
    async (env) => {
      const wf = defineWorkflow('retry-refused', async (ctx) => ctx.waitForEvent('go'));
      const quick = defineWorkflow('retry-refused-quick', async () => 'ok');
      const w = await engineWorld(env, [wf, quick]);
      const waiting = await w.engine.startRun(wf, null);
      const done = await w.engine.startRun(quick, null);
      await w.runToEnd(done.id);
      await w.runUntil('the run waits', async () => (await w.engine.getRun(waiting.id))?.status === 'waiting');
      const before = await w.engine.getRun(waiting.id);
      await rejectsWithCode(w.engine.retryRun(waiting.id), 'RUN_CONFLICT', 'retry of a waiting run');
      await rejectsWithCode(w.engine.retryRun(done.id), 'RUN_CONFLICT', 'retry of a completed run');
      await rejectsWithCode(w.engine.retryRun('no-such-run'), 'RUN_NOT_FOUND', 'retry of a missing run');
      await rejectsWithCode(w.engine.retryRun(waiting.id, { reason: 42 } as never), 'INVALID_INPUT', 'a reason that is not a string');
      await rejectsWithCode(w.engine.retryRun(waiting.id, { because: 'x' } as never), 'INVALID_INPUT', 'an unknown option');
      const after = await w.engine.getRun(waiting.id);
      assert.equal(after?.fence, before?.fence);
      assert.equal(after?.retries, undefined);
      assert.equal((await w.engine.getRun(done.id))?.retries, undefined);
    },
  ),

  conformanceCase('a caught failure the code went past is kept: the retry replays it as the same failure, so the code takes the same path', async (env) => {
    const calls = { flaky: 0, use: 0, last: 0 };
    let lastFails = true;
    const wf = defineWorkflow('retry-caught', async (ctx) => {
      const value = await ctx
        .step('flaky', () => {
          calls.flaky += 1;
          if (calls.flaky === 1) throw new NonRetryableError('down');
          return 'real';
        })
        .catch(() => 'fallback');
      const used = await ctx.step('use', () => {
        calls.use += 1;
        return `used ${value}`;
      });
      await ctx.step('last', () => {
        calls.last += 1;
        if (lastFails) throw new NonRetryableError('last is broken');
      });
      return used;
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    assert.equal((await w.runToEnd(handle.id)).status, 'failed');
    lastFails = false;
    const reopened = await w.engine.retryRun(handle.id);
    assert.deepEqual(reopened.retries?.[0]?.forgottenSteps, ['last'], 'only the failure nothing went past is forgotten');
    const done = await w.runToEnd(handle.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.output, 'used fallback', 'the kept output was computed from the same past');
    assert.deepEqual(calls, { flaky: 1, use: 1, last: 2 });
  }),

  conformanceCase('a retried run whose code no longer matches its kept history fails with NON_DETERMINISM instead of replaying a wrong value', async (env) => {
    let renamed = false;
    const wf = defineWorkflow('retry-diverged', async (ctx) => {
      const first = renamed ? await ctx.step('other', () => 'other') : await ctx.step('first', () => 'first');
      await ctx.step('second', () => {
        throw new NonRetryableError('broken');
      });
      return first;
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    assert.equal((await w.runToEnd(handle.id)).status, 'failed');
    renamed = true;
    await w.engine.retryRun(handle.id);
    const again = await w.runToEnd(handle.id);
    assert.equal(again.status, 'failed');
    assert.equal(again.error?.code, 'NON_DETERMINISM');
  }),

  conformanceCase('a parent failed by its failed child: retrying the parent retries the child too, which resumes from its own failure', async (env) => {
    const calls = { prep: 0, work: 0, before: 0 };
    let broken = true;
    const kid = defineWorkflow('retry-kid', async (ctx) => {
      await ctx.step('prep', () => ++calls.prep);
      return ctx.step('work', () => {
        calls.work += 1;
        if (broken) throw new NonRetryableError('kid is broken');
        return 'kid done';
      });
    });
    const parent = defineWorkflow('retry-parent', async (ctx) => {
      await ctx.step('before', () => ++calls.before);
      return ctx.child(kid, null);
    });
    const w = await engineWorld(env, [parent, kid]);
    const handle = await w.engine.startRun(parent, null);
    const failed = await w.runToEnd(handle.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'CHILD_FAILED');
    const [child] = (await w.engine.listRuns({ parentRunId: handle.id })).runs;
    assert.equal(child?.status, 'failed');
    broken = false;
    const reopened = await w.engine.retryRun(handle.id);
    assert.deepEqual(reopened.retries?.[0]?.retriedChildren, [child?.id]);
    const done = await w.runToEnd(handle.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.output, 'kid done');
    const kidRun = await w.engine.getRun(child?.id as string);
    assert.equal(kidRun?.status, 'completed');
    assert.equal(kidRun?.retries?.length, 1);
    assert.deepEqual(calls, { prep: 1, work: 2, before: 1 });
    assert.equal((await w.engine.listRuns({ parentRunId: handle.id })).runs.length, 1, 'no second child was started');
  }),

  conformanceCase('a run whose saga ran its compensations is refused (its effects were undone)', async (env) => {
    const wf = defineWorkflow('retry-compensated', async (ctx) => {
      await ctx.step('reserve', () => 'r', { compensate: () => undefined });
      await ctx.step('charge', () => {
        throw new NonRetryableError('declined');
      });
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    assert.equal((await w.runToEnd(handle.id)).status, 'failed');
    const error = await rejectsWithCode(w.engine.retryRun(handle.id), 'RUN_CONFLICT', 'retry of a compensated run');
    assert.equal((error.data as { reason?: string }).reason, 'compensated');
    assert.equal((await w.engine.getRun(handle.id))?.status, 'failed');
  }),

  conformanceCase('a run failed by its deadline: the retry removes the passed deadline, so the run can finish', async (env) => {
    const wf = defineWorkflow(
      'retry-deadline',
      async (ctx) => {
        await ctx.sleep('nap', '2m');
        return 'woke';
      },
      { deadline: '1m' },
    );
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const failed = await w.runToEnd(handle.id);
    assert.equal(failed.error?.code, 'DEADLINE_EXCEEDED');
    const reopened = await w.engine.retryRun(handle.id);
    assert.equal(reopened.deadline, undefined);
    const done = await w.runToEnd(handle.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.output, 'woke');
  }),

  conformanceCase("retried from an engine without workers (as the CLI does): a worker's recovery picks the run up", async (env) => {
    let broken = true;
    const wf = defineWorkflow('retry-remote', async (ctx) =>
      ctx.step('s', () => {
        if (broken) throw new NonRetryableError('broken');
        return 'ok';
      }),
    );
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    assert.equal((await w.runToEnd(handle.id)).status, 'failed');
    broken = false;
    const operator = await w.startEngine([], { noWorkers: true });
    const reopened = await operator.retryRun(handle.id);
    assert.ok(reopened.wakeAt !== undefined && reopened.wakeAt <= w.clock.now(), 'left due');
    assert.equal((await w.runToEnd(handle.id)).output, 'ok');
  }),
]);
