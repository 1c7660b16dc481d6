import assert from 'node:assert/strict';
import { CairnError, defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { uuidv7 } from '../fixtures/uuid-v7.js';
import { engineWorld } from './engine-world.js';

const waitsForApproval = (name = 'event-approval') =>
  defineWorkflow(name, async (ctx) => {
    const payload = await ctx.waitForEvent('approved');
    return { payload };
  });

/** Engine scenarios: events delivered to runs. */
export const eventsEngineGroup: CaseGroup = caseGroup('engine.events', 'engine: events', [
  conformanceCase('waitForEvent returns the payload of an event sent while the run waits', async (env) => {
    const wf = waitsForApproval();
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    assert.equal((await w.raw.runs.get(handle.id))?.wakeAt, undefined, 'a wait without timeout has no timer');
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'approved', { by: 'ops' }), { delivered: true });
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, { payload: { by: 'ops' } });
    const [step] = await w.raw.steps.load(handle.id);
    assert.deepEqual([step?.kind, step?.status, step?.output], ['event', 'succeeded', { by: 'ops' }]);
  }),

  conformanceCase('an event sent before the wait is kept and consumed when the wait is reached', async (env) => {
    const wf = defineWorkflow('event-early', async (ctx) => {
      await ctx.sleep('first', '10m');
      return { payload: await ctx.waitForEvent('approved') };
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'approved', 'early'), { delivered: true });
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, { payload: 'early' });
  }),

  conformanceCase('the first delivery of a name wins', async (env) => {
    const wf = defineWorkflow('event-first', async (ctx) => {
      await ctx.sleep('first', '10m');
      return ctx.waitForEvent('approved');
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.settle();
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'approved', 'one'), { delivered: true });
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'approved', 'two'), { delivered: false });
    assert.equal((await w.runToEnd(handle.id)).output, 'one');
  }),

  conformanceCase('a wait with a timeout throws EVENT_TIMEOUT, which the workflow can catch', async (env) => {
    const wf = defineWorkflow('event-timeout', async (ctx) => {
      try {
        await ctx.waitForEvent('approved', { timeout: '5m' });
        return 'approved';
      } catch (error) {
        return CairnError.is(error, 'EVENT_TIMEOUT') ? 'timed out' : `other: ${String(error)}`;
      }
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    assert.equal((await w.raw.runs.get(handle.id))?.wakeAt, env.t0 + 5 * 60_000);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'timed out');
    assert.equal((await w.raw.steps.load(handle.id))[0]?.status, 'failed');
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'approved', 'late'), { delivered: false }, 'a finished run takes no events');
  }),

  conformanceCase('a null payload arrives as null', async (env) => {
    const wf = waitsForApproval('event-null');
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.settle();
    await w.engine.sendEvent(handle.id, 'approved', null);
    assert.deepStrictEqual((await w.runToEnd(handle.id)).output, { payload: null });
  }),

  conformanceCase('sending to a missing run is RUN_NOT_FOUND', async (env) => {
    const w = await engineWorld(env, [waitsForApproval()]);
    await rejectsWithCode(w.engine.sendEvent(uuidv7(), 'approved', 1), 'RUN_NOT_FOUND');
  }),
]);
