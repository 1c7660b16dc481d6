import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from '../engine/engine-world.js';

const describeCalls = (calls: ReadonlyArray<{ method: string }>) => calls.map((c) => c.method).join(', ');

/** `steps` inline steps, then a one-minute sleep: a run woken once, after its steps. */
const stepsThenNap = (name: string, steps: number) =>
  defineWorkflow(name, async (ctx) => {
    for (let i = 0; i < steps; i += 1) await ctx.step(`s${i}`, () => i);
    await ctx.sleep('nap', '1m');
    return steps;
  });

/** Adversarial: a budget of store round trips per step and per replay (through the counting proxy). */
export const storeBudgetGroup: CaseGroup = caseGroup('adversarial.store-budget', 'adversarial: store call budget', [
  conformanceCase('an inline task step costs at most 2 store writes and no read', async (env) => {
    const steps = 12;
    const wf = defineWorkflow('budget-inline', async (ctx) => {
      let total = 0;
      for (let i = 0; i < steps; i += 1) total += await ctx.step(`s${i}`, () => i);
      return total;
    });
    const w = await engineWorld(env, [wf]);
    w.store.reset();
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 66);
    const stepWrites = w.store.calls.filter((c) => c.runId === handle.id && c.method.startsWith('steps.') && c.write);
    assert.ok(stepWrites.length <= 2 * steps, `${stepWrites.length} step writes for ${steps} inline steps (budget ${2 * steps})`);
    const all = w.store.calls.filter((c) => c.runId === handle.id);
    // create, claim, one steps.load, 2 per step, the final transition.
    assert.ok(all.length <= 2 * steps + 4, `${all.length} store calls for a run of ${steps} steps (budget ${2 * steps + 4}): ${describeCalls(all)}`);
  }),

  conformanceCase('each replay reads the steps exactly once, in one steps.load', async (env) => {
    const wf = defineWorkflow('budget-replays', async (ctx) => {
      for (let i = 0; i < 10; i += 1) await ctx.step(`a${i}`, () => i);
      await ctx.sleep('first', '1m');
      for (let i = 0; i < 10; i += 1) await ctx.step(`b${i}`, () => i);
      await ctx.sleep('second', '1m');
      return 'done';
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const w = await engineWorld(env, [wf], { stickyExecutions: false });
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'done');
    const executions = run.fence;
    assert.ok(executions >= 3, 'the run was executed at least three times');
    assert.equal(w.store.count('steps.load', handle.id), executions, 'one steps.load per execution (claim)');
  }),

  conformanceCase('the store calls of a replay do not grow with the number of recorded steps', async (env) => {
    const callsOfLastReplay = async (steps: number) => {
      const wf = stepsThenNap(`budget-long-${steps}`, steps);
      // About the replay: every wake replays (a kept execution would resume without one, decision 64).
      const w = await engineWorld(env, [wf], { stickyExecutions: false });
      const handle = await w.engine.startRun(wf, null);
      await w.runToEnd(handle.id);
      const calls = w.store.calls.filter((c) => c.runId === handle.id);
      const methods = calls.map((c) => c.method);
      // The last replay is the last claim that went on to read the steps; a redundant dispatch
      // after the run ended (its claim finds the run terminal) is not a replay. It ends with the
      // run's transition.
      const lastLoad = methods.lastIndexOf('steps.load');
      const claim = methods.lastIndexOf('runs.claim', lastLoad);
      const end = methods.indexOf('runs.transition', lastLoad);
      return calls.slice(claim, end + 1);
    };
    const short = await callsOfLastReplay(2);
    const long = await callsOfLastReplay(40);
    assert.equal(
      long.length,
      short.length,
      `a replay over 40 steps made ${long.length} calls (${describeCalls(long)}), over 2 steps ${short.length} (${describeCalls(short)})`,
    );
    assert.ok(long.length <= 5, `a replay made ${long.length} calls: ${describeCalls(long)}`);
  }),

  conformanceCase('a wake that resumes a kept execution reads no step, and costs the same store calls after 40 steps as after 2', async (env) => {
    const callsOfLastWake = async (steps: number) => {
      const wf = stepsThenNap(`budget-kept-${steps}`, steps);
      // Kept executions on, whatever CAIRN_STICKY says: this case is about them (decision 64).
      const w = await engineWorld(env, [wf], { stickyExecutions: {} });
      const handle = await w.engine.startRun(wf, null);
      const run = await w.runToEnd(handle.id);
      assert.equal(run.output, steps);
      const calls = w.store.calls.filter((c) => c.runId === handle.id);
      const methods = calls.map((c) => c.method);
      // The wake: the last claim that went on to end the run, through its transition.
      const end = methods.lastIndexOf('runs.transition');
      const claim = methods.lastIndexOf('runs.claim', end);
      return calls.slice(claim, end + 1);
    };
    const short = await callsOfLastWake(2);
    const long = await callsOfLastWake(40);
    assert.deepEqual(
      long.map((c) => c.method),
      short.map((c) => c.method),
      `the wake after 40 steps made ${describeCalls(long)}, after 2 steps ${describeCalls(short)}`,
    );
    assert.ok(!long.some((c) => c.method === 'steps.load'), `the wake read the steps: ${describeCalls(long)}`);
  }),
]);
