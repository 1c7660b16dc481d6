import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { HOSTILE_NAMES, HOSTILE_STATE_KEYS, label } from '../fixtures/hostile-strings.js';
import { engineWorld } from '../engine/engine-world.js';

/** Adversarial: hostile workflow, step, event and state names through the engine. */
export const hostileNamesEngineGroup: CaseGroup = caseGroup('adversarial.hostile-names', 'adversarial: hostile names through the engine', [
  conformanceCase('workflows with hostile names run, and list by their exact name', async (env) => {
    const workflows = HOSTILE_NAMES.map((name) => defineWorkflow(name, async (ctx) => ctx.step('echo', () => name)));
    // Sanitised per-workflow queue names could collide; shared queues cannot.
    const w = await engineWorld(env, workflows, { queueStrategy: 'shared-groups' });
    for (const wf of workflows) {
      const handle = await w.engine.startRun(wf, null);
      const run = await w.runToEnd(handle.id);
      assert.equal(run.output, wf.name, `workflow ${label(wf.name)}`);
      assert.deepEqual(
        (await w.engine.listRuns({ workflow: wf.name })).runs.map((r) => r.id),
        [handle.id],
        `listRuns of ${label(wf.name)}`,
      );
    }
  }),

  conformanceCase('hostile step names, event names and state keys round-trip through a run', async (env) => {
    const events = HOSTILE_NAMES;
    const wf = defineWorkflow('hostile-inside', async (ctx) => {
      const steps = [];
      for (const name of HOSTILE_NAMES) steps.push(await ctx.step(name, () => name));
      for (const key of HOSTILE_STATE_KEYS) await ctx.setState(key, key);
      const received = [];
      for (const name of events) received.push(await ctx.waitForEvent(name));
      return { steps, received };
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits for its first event', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    for (const name of events)
      assert.deepEqual(await w.engine.sendEvent(handle.id, name, `payload of ${name}`), { delivered: true, duplicate: false, seq: 1 }, label(name));
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, { steps: HOSTILE_NAMES, received: events.map((n) => `payload of ${n}`) });
    const state = await w.engine.state(handle.id);
    for (const key of HOSTILE_STATE_KEYS) assert.equal(Object.getOwnPropertyDescriptor(state, key)?.value, key, `state key ${label(key)}`);
    const keys = (await w.raw.steps.load(handle.id)).map((s) => s.key);
    assert.deepEqual(keys.slice(0, HOSTILE_NAMES.length), HOSTILE_NAMES);
  }),
]);
