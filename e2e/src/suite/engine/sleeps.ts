import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from './engine-world.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Engine scenarios: durable timers. */
export const sleepsGroup: CaseGroup = caseGroup('engine.sleeps', 'engine: sleeps', [
  conformanceCase('a sleep suspends the run until its wake time, not a moment sooner', async (env) => {
    let after = 0;
    const wf = defineWorkflow('sleep-hour', async (ctx) => {
      await ctx.sleep('nap', '1h');
      after += 1;
      return 'rested';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    const [nap] = await w.raw.steps.load(handle.id);
    assert.deepEqual([nap?.kind, nap?.status, nap?.wakeAt], ['sleep', 'waiting', env.t0 + HOUR]);
    await w.clock.advance(HOUR - 1);
    await w.settle();
    assert.equal(after, 0, 'nothing after the sleep may run before it ends');
    assert.equal((await w.raw.runs.get(handle.id))?.status, 'waiting');
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'rested');
    assert.equal(after, 1);
    assert.equal((await w.raw.steps.load(handle.id))[0]?.status, 'succeeded');
  }),

  conformanceCase('sleepUntil a time already passed does not wait', async (env) => {
    const wf = defineWorkflow('sleep-past', async (ctx) => {
      await ctx.sleepUntil('past', env.t0 - 1);
      return 'on time';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.settle();
    const run = await w.raw.runs.get(handle.id);
    assert.equal(run?.status, 'completed', 'completed without the clock moving');
    assert.equal(run?.output, 'on time');
  }),

  conformanceCase('parallel sleeps: the run completes once the longest one ended', async (env) => {
    const wf = defineWorkflow('sleep-parallel', async (ctx) => {
      await Promise.all([ctx.sleep('short', '1m'), ctx.sleep('long', '1h')]);
      return ctx.now();
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.ok((run.output as number) >= env.t0 + HOUR, 'the code after both sleeps runs after the longer one');
    assert.deepEqual((await w.raw.steps.load(handle.id)).slice(0, 2).map((s) => [s.key, s.status, s.wakeAt]), [
      ['short', 'succeeded', env.t0 + MINUTE],
      ['long', 'succeeded', env.t0 + HOUR],
    ]);
  }),

  conformanceCase('a replay in the middle of a sleep keeps its original wake time', async (env) => {
    const wf = defineWorkflow('sleep-woken', async (ctx) => {
      await ctx.sleep('nap', '1h');
      return 'done';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    await w.clock.advance(30 * MINUTE);
    // An event nobody waits for wakes the run: it replays and must go back to the same timer.
    await w.engine.sendEvent(handle.id, 'poke', null);
    await w.runUntil('the woken run replays', async () => (await w.raw.runs.get(handle.id))?.fence === 2);
    await w.settle();
    const run = await w.raw.runs.get(handle.id);
    assert.equal(run?.status, 'waiting');
    assert.equal(run?.wakeAt, env.t0 + HOUR, 'the timer is not restarted');
    assert.equal((await w.runToEnd(handle.id)).output, 'done');
  }),
]);
