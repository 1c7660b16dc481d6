import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

/** Engine scenarios: cancellation. */
export const cancellationGroup: CaseGroup = caseGroup('engine.cancellation', 'engine: cancellation', [
  conformanceCase('cancelling a sleeping run ends it cancelled; nothing after the sleep runs', async (env) => {
    let after = 0;
    const wf = defineWorkflow('cancel-sleeping', async (ctx) => {
      await ctx.sleep('nap', '1h');
      await ctx.step('after', () => (after += 1));
      return 'done';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    await w.engine.cancel(handle.id);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'cancelled');
    assert.equal(run.cancelRequested, true);
    await w.clock.advance(2 * 3_600_000);
    await w.settle();
    assert.equal(after, 0);
    assert.equal((await w.raw.runs.get(handle.id))?.status, 'cancelled', 'a cancelled run stays cancelled');
    await rejectsWithCode(handle.result(), 'RUN_CANCELLED');
  }),

  conformanceCase('cancellation is observed at the next step boundary', async (env) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let after = 0;
    let signalled = false;
    const wf = defineWorkflow('cancel-running', async (ctx) => {
      await ctx.step('slow', async (step) => {
        await gate;
        signalled = step.signal.aborted;
        return 'slow done';
      });
      await ctx.step('after', () => (after += 1));
      return 'done';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.settle();
    assert.equal((await w.raw.runs.get(handle.id))?.status, 'running');
    await w.engine.cancel(handle.id);
    release();
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'cancelled');
    assert.equal(after, 0, 'no step starts after cancellation was observed');
    assert.equal(signalled, true, "the running step's signal was aborted");
  }),

  conformanceCase('cancelling a finished run changes nothing', async (env) => {
    const wf = defineWorkflow('cancel-finished', async () => 'finished');
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const before = await w.runToEnd(handle.id);
    await w.engine.cancel(handle.id);
    await w.settle();
    assert.deepEqual(await w.raw.runs.get(handle.id), before);
  }),
]);
