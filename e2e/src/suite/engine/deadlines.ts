import assert from 'node:assert/strict';
import { CairnError, defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

const MINUTE = 60_000;

/** Engine scenarios: run deadlines, enforced on any engine and when no engine holds the run. */
export const deadlinesGroup: CaseGroup = caseGroup('engine.deadlines', 'engine: deadlines', [
  conformanceCase('a deadline passing while a queued step runs on another engine fails the run, aborts the body, ends the child', async (env) => {
    const seen: { aborted: boolean; reason?: unknown } = { aborted: false };
    let after = 0;
    const child = defineWorkflow('deadline-child', async (ctx) => {
      await ctx.sleep('long', '1h');
      return 'child done';
    });
    const wf = defineWorkflow('deadline-queued', async (ctx) => {
      await Promise.all([
        ctx.child(child, null),
        ctx.step(
          'slow',
          (step) =>
            new Promise<never>((_resolve, reject) => {
              step.signal.addEventListener(
                'abort',
                () => {
                  seen.aborted = true;
                  seen.reason = step.signal.reason;
                  reject(step.signal.reason);
                },
                { once: true },
              );
            }),
          { queued: true },
        ),
      ]);
      await ctx.step('after', () => (after += 1));
      return 'done';
    });
    const w = await engineWorld(env, [wf, child]);
    const other = await w.startEngine([wf, child]);
    const started = w.clock.now();
    const handle = await other.startRun(wf, null, { deadline: '2m' });
    const stored = await w.raw.runs.get(handle.id);
    assert.equal(stored?.deadline, started + 2 * MINUTE, 'the deadline is stored with the run');
    await w.runUntil('the queued body runs on the other engine', async () =>
      (await w.raw.steps.load(handle.id)).some((s) => s.key === 'slow' && s.status === 'running'),
    );
    const run = await w.runToEnd(handle.id);
    await w.runUntil('the body sees its signal abort', async () => seen.aborted);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'DEADLINE_EXCEEDED');
    assert.ok(run.updatedAt >= started + 2 * MINUTE && run.updatedAt < started + 3 * MINUTE, `failed at the deadline (at +${run.updatedAt - started} ms)`);
    assert.ok(CairnError.is(seen.reason, 'DEADLINE_EXCEEDED'), `the body's signal.reason is DEADLINE_EXCEEDED, got ${String(seen.reason)}`);
    assert.equal(after, 0);
    const childStep = (await w.raw.steps.load(handle.id)).find((s) => s.kind === 'child');
    assert.ok(childStep?.childRunId, 'the child was started');
    const childRun = await w.runToEnd(childStep.childRunId);
    // The child inherited the deadline: at it, the child fails DEADLINE_EXCEEDED itself or is
    // cancelled by its parent, whichever its engine observes first; it never runs on.
    assert.equal(childRun.deadline, started + 2 * MINUTE, 'the child inherited the deadline');
    assert.ok(
      (childRun.status === 'cancelled' && childRun.error?.code === 'CANCELLED') ||
        (childRun.status === 'failed' && childRun.error?.code === 'DEADLINE_EXCEEDED'),
      `the child ended at the deadline (${childRun.status} ${childRun.error?.code})`,
    );
    assert.ok(childRun.updatedAt < started + 3 * MINUTE);
    const error = await rejectsWithCode(handle.result(), 'RUN_FAILED');
    assert.ok(CairnError.is(error.cause, 'DEADLINE_EXCEEDED'));
  }),

  conformanceCase('a deadline passing while the run sleeps and no engine holds it fails the run', async (env) => {
    let after = 0;
    const wf = defineWorkflow('deadline-sleeping', async (ctx) => {
      await ctx.sleep('nap', '1h');
      await ctx.step('after', () => (after += 1));
      return 'done';
    });
    const w = await engineWorld(env, [wf]);
    const other = await w.startEngine([wf]);
    const started = w.clock.now();
    const deadline = new Date(started + 10 * MINUTE);
    const handle = await other.startRun(wf, null, { deadline });
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    const sleeping = await w.raw.runs.get(handle.id);
    assert.ok(sleeping?.wakeAt !== undefined && sleeping.wakeAt <= deadline.getTime(), 'a waiting run wakes no later than its deadline');
    // The engine that ran it goes away: only the recovery of the first engine is left.
    await other.stop();
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'DEADLINE_EXCEEDED');
    assert.ok(run.updatedAt >= deadline.getTime() && run.updatedAt < started + 30 * MINUTE, `failed near the deadline (at +${run.updatedAt - started} ms)`);
    assert.equal(after, 0);
  }),

  conformanceCase("a workflow's default deadline applies; startRun's overrides it; bad deadlines are refused", async (env) => {
    const wf = defineWorkflow(
      'deadline-default',
      async (ctx) => {
        await ctx.sleep('nap', '1h');
        return 'done';
      },
      { deadline: '5m' },
    );
    const w = await engineWorld(env, [wf]);
    const started = w.clock.now();
    const byDefault = await w.engine.startRun(wf, null);
    const overridden = await w.engine.startRun(wf, null, { deadline: 2 * MINUTE });
    assert.equal((await w.raw.runs.get(byDefault.id))?.deadline, started + 5 * MINUTE);
    assert.equal((await w.raw.runs.get(overridden.id))?.deadline, started + 2 * MINUTE);
    const first = await w.runToEnd(overridden.id);
    assert.equal(first.error?.code, 'DEADLINE_EXCEEDED');
    const second = await w.runToEnd(byDefault.id);
    assert.equal(second.error?.code, 'DEADLINE_EXCEEDED');
    assert.ok(second.updatedAt >= started + 5 * MINUTE);
    const runsBefore = (await w.raw.runs.list({})).runs.length;
    await rejectsWithCode(w.engine.startRun(wf, null, { deadline: '-5m' as never }), 'INVALID_INPUT');
    await rejectsWithCode(w.engine.startRun(wf, null, { deadline: 'soon' as never }), 'INVALID_INPUT');
    await rejectsWithCode(w.engine.startRun(wf, null, { deadline: new Date(Number.NaN) }), 'INVALID_INPUT');
    await rejectsWithCode(w.engine.startRun(wf, null, { deadline: {} as never }), 'INVALID_INPUT');
    assert.equal((await w.raw.runs.list({})).runs.length, runsBefore, 'a refused start writes nothing');
  }),
]);
