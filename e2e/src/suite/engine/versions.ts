import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from './engine-world.js';

const versioned = (version: string) =>
  defineWorkflow(
    'versioned',
    async (ctx) => {
      const made = await ctx.step(`made-by-${version}`, () => version);
      await ctx.sleep('nap', '1h');
      return { made, replayedBy: version };
    },
    { version },
  );

/** Engine scenarios: versions. */
export const versionsEngineGroup: CaseGroup = caseGroup('engine.versions', 'engine: versions', [
  conformanceCase('engine start registers every version, active', async (env) => {
    const w = await engineWorld(env, [versioned('1'), versioned('2')]);
    assert.deepEqual((await w.raw.versions.list('versioned')).map((v) => [v.version, v.status]).sort(), [
      ['1', 'active'],
      ['2', 'active'],
    ]);
  }),

  conformanceCase('new runs start on the version listed last; each run replays on its own version', async (env) => {
    const w = await engineWorld(env, [versioned('1'), versioned('2')]);
    const latest = await w.engine.startRun('versioned', null);
    const pinned = await w.engine.startRun('versioned', null, { version: '1' });
    assert.equal((await w.raw.runs.get(latest.id))?.version, '2');
    assert.equal((await w.raw.runs.get(pinned.id))?.version, '1');
    assert.deepEqual((await w.runToEnd(latest.id)).output, { made: '2', replayedBy: '2' });
    assert.deepEqual((await w.runToEnd(pinned.id)).output, { made: '1', replayedBy: '1' });
  }),

  conformanceCase('a worker without the run’s version steps aside; a worker with it completes the run', async (env) => {
    const w = await engineWorld(env, [versioned('1')]);
    const handle = await w.engine.startRun('versioned', null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    await w.engine.stop();
    // A newer deploy that only knows version 2 must not fail or corrupt the version-1 run.
    const newer = await w.startEngine([versioned('2')]);
    await w.runUntil('the newer worker met the run', async () => ((await w.raw.runs.get(handle.id))?.fence ?? 0) >= 2);
    await w.settle();
    assert.equal((await w.raw.runs.get(handle.id))?.status, 'waiting');
    await newer.stop();
    await w.startEngine([versioned('1'), versioned('2')]);
    assert.deepEqual((await w.runToEnd(handle.id)).output, { made: '1', replayedBy: '1' });
  }),
]);
