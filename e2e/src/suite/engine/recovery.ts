import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from './engine-world.js';

/** Engine scenarios: recovery after a process dies or a job is lost. */
export const recoveryGroup: CaseGroup = caseGroup('engine.recovery', 'engine: recovery', [
  conformanceCase('a run whose process died while it slept is resumed by another process', async (env) => {
    const ran = { before: 0, after: 0 };
    const wf = defineWorkflow('recover-sleep', async (ctx) => {
      await ctx.step('before', () => (ran.before += 1));
      await ctx.sleep('nap', '1h');
      await ctx.step('after', () => (ran.after += 1));
      return 'done';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    // The process dies: its queue, with the delayed job that would have woken the run, is gone.
    await w.engine.stop();
    await w.startEngine([wf]);
    assert.equal((await w.runToEnd(handle.id)).output, 'done');
    assert.deepEqual(ran, { before: 1, after: 1 });
  }),

  conformanceCase('a run whose first job was never picked up is started by recovery', async (env) => {
    const wf = defineWorkflow('recover-lost-job', async (ctx) => ctx.step('only', () => 'ran'));
    // This engine records runs but runs no workers: its jobs are never consumed.
    const w = await engineWorld(env, [wf], { noWorkers: true });
    const handle = await w.engine.startRun(wf, null);
    assert.equal((await w.raw.runs.get(handle.id))?.status, 'pending');
    await w.startEngine([wf]);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'ran');
  }),

  conformanceCase('a repeated idempotency key returns the existing run, which runs once', async (env) => {
    let ran = 0;
    const wf = defineWorkflow('recover-idempotent', async (ctx, input: { order: number }) => ctx.step('charge', () => ((ran += 1), input.order)));
    const w = await engineWorld(env, [wf]);
    const first = await w.engine.startRun(wf, { order: 1 }, { idempotencyKey: 'order-1' });
    const second = await w.engine.startRun(wf, { order: 2 }, { idempotencyKey: 'order-1' });
    assert.equal(first.created, true);
    assert.equal(second.created, false);
    assert.equal(second.id, first.id);
    assert.equal((await w.runToEnd(first.id)).output, 1);
    assert.equal(ran, 1);
    assert.equal((await w.raw.runs.list({ workflow: 'recover-idempotent' })).runs.length, 1);
  }),
]);
