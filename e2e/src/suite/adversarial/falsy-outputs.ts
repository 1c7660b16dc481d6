import assert from 'node:assert/strict';
import { defineWorkflow, type Json } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from '../engine/engine-world.js';

const VALUES: ReadonlyArray<[string, Json | undefined]> = [
  ['zero', 0],
  ['false', false],
  ['empty', ''],
  ['null', null],
  ['undefined', undefined],
  ['object', {}],
  ['array', []],
];

/** Adversarial: falsy and null values through the engine. */
export const falsyOutputsGroup: CaseGroup = caseGroup('adversarial.falsy-outputs', 'adversarial: falsy and null outputs', [
  conformanceCase('step results 0, false, "", null, undefined are served exactly on replay', async (env) => {
    const executions: Array<Array<Json | undefined>> = [];
    const ran: Record<string, number> = {};
    const wf = defineWorkflow('falsy-steps', async (ctx) => {
      const seen: Array<Json | undefined> = [];
      for (const [name, value] of VALUES) {
        seen.push(await ctx.step(name, () => ((ran[name] = (ran[name] ?? 0) + 1), value)));
      }
      executions.push(seen);
      await ctx.sleep('nap', 1_000);
      return 'done';
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const w = await engineWorld(env, [wf], { stickyExecutions: false });
    const handle = await w.engine.startRun(wf, null);
    await w.runToEnd(handle.id);
    assert.equal(executions.length, 2, 'the handler ran, then replayed after the sleep');
    const expected = VALUES.map(([, v]) => v);
    assert.deepStrictEqual(executions[0], expected, 'first execution');
    assert.deepStrictEqual(executions[1], expected, 'replay, served from the store');
    for (const [name] of VALUES) assert.equal(ran[name], 1, `step ${name} must not run again because its result was falsy`);
  }),

  conformanceCase('run outputs 0, false, "", null, undefined come back exactly from result()', async (env) => {
    const wf = defineWorkflow('falsy-output', async (_ctx, input: { index: number }) => VALUES[input.index]?.[1]);
    const w = await engineWorld(env, [wf]);
    for (const [index, [name, value]] of VALUES.entries()) {
      const handle = await w.engine.startRun(wf, { index });
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed', name);
      assert.deepStrictEqual(run.output, value, `stored output ${name}`);
      assert.deepStrictEqual(await handle.result(), value, `result() of ${name}`);
    }
  }),
]);
