import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from './engine-world.js';

/** Engine scenarios: per-run state. */
export const stateEngineGroup: CaseGroup = caseGroup('engine.state', 'engine: state', [
  conformanceCase('setState persists each key; state() reads the latest value across replays', async (env) => {
    const seen: unknown[] = [];
    const wf = defineWorkflow('state-progress', async (ctx) => {
      seen.push(await ctx.state('stage'));
      await ctx.setState('stage', 'started');
      await ctx.setState('count', 1);
      await ctx.sleep('nap', '1m');
      await ctx.setState('stage', 'resumed');
      return ctx.state('stage');
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const w = await engineWorld(env, [wf], { stickyExecutions: false });
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    assert.deepEqual(await w.engine.state(handle.id), { stage: 'started', count: 1 });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'resumed');
    assert.deepEqual(seen, [undefined, 'started'], 'the replay reads the stored value');
    assert.deepEqual(await w.engine.state(handle.id), { stage: 'resumed', count: 1 });
  }),
]);
