import assert from 'node:assert/strict';
import { CairnError, defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from './engine-world.js';

/** Engine scenarios: child runs. */
export const childrenGroup: CaseGroup = caseGroup('engine.children', 'engine: children', [
  conformanceCase("a child's output is returned to its parent; the child knows its parent", async (env) => {
    let childRuns = 0;
    const child = defineWorkflow('child-double', async (ctx, input: { n: number }) => {
      childRuns += 1;
      return ctx.step('double', () => input.n * 2);
    });
    const parent = defineWorkflow('child-parent', async (ctx, input: { n: number }) => {
      const doubled = await ctx.child(child, { n: input.n });
      return ctx.step('after', () => doubled + 1);
    });
    const w = await engineWorld(env, [parent, child]);
    const handle = await w.engine.startRun(parent, { n: 20 });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 41);
    const [spawn] = await w.raw.steps.load(handle.id);
    assert.equal(spawn?.kind, 'child');
    assert.equal(spawn?.status, 'succeeded');
    assert.ok(spawn?.childRunId);
    const childRun = await w.raw.runs.get(spawn.childRunId);
    assert.equal(childRun?.status, 'completed');
    assert.deepEqual(childRun?.parent, { runId: handle.id, stepKey: spawn.key });
    assert.equal((await w.raw.runs.list({ workflow: 'child-double' })).runs.length, 1, 'the child is created once');
    assert.ok(childRuns >= 1);
  }),

  conformanceCase('a failed child throws CHILD_FAILED into its parent', async (env) => {
    const child = defineWorkflow('child-fails', async () => {
      throw new RangeError('child broke');
    });
    const parent = defineWorkflow('child-failing-parent', async (ctx) => {
      try {
        await ctx.child(child, null);
        return 'unexpected';
      } catch (error) {
        return CairnError.is(error, 'CHILD_FAILED') ? 'child failed' : `other: ${String(error)}`;
      }
    });
    const w = await engineWorld(env, [parent, child]);
    const handle = await w.engine.startRun(parent, null);
    assert.equal((await w.runToEnd(handle.id)).output, 'child failed');
    const [spawn] = await w.raw.steps.load(handle.id);
    assert.equal(spawn?.status, 'failed');
    assert.equal((await w.raw.runs.get(spawn?.childRunId ?? ''))?.status, 'failed');
  }),

  conformanceCase('cancelling a parent cancels its running child', async (env) => {
    const child = defineWorkflow('child-sleeper', async (ctx) => {
      await ctx.sleep('long', '1d');
      return 'woke';
    });
    const parent = defineWorkflow('child-cancelled-parent', async (ctx) => ctx.child(child, null));
    const w = await engineWorld(env, [parent, child]);
    const handle = await w.engine.startRun(parent, null);
    await w.runUntil('the child sleeps', async () => {
      const [spawn] = await w.raw.steps.load(handle.id);
      return spawn?.childRunId !== undefined && (await w.raw.runs.get(spawn.childRunId))?.status === 'waiting';
    });
    await w.engine.cancel(handle.id);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'cancelled');
    const [spawn] = await w.raw.steps.load(handle.id);
    const childRun = await w.runToEnd(spawn?.childRunId ?? '');
    assert.equal(childRun.status, 'cancelled');
  }),
]);
