import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { CONTINUED_AS } from '@cairn/core/backend';
import { FAULT_POINTS } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { CrashAt } from '../fixtures/crash-at.js';
import { engineWorld } from './engine-world.js';

/** A counter that sleeps, then continues as new until it reaches `until`; `ran` counts its bodies. */
function counter(ran: Map<string, number>) {
  return defineWorkflow('counter', async (ctx, input: { n: number; until: number }) => {
    const n = await ctx.step('bump', () => {
      ran.set(`bump-${input.n}`, (ran.get(`bump-${input.n}`) ?? 0) + 1);
      return input.n + 1;
    });
    await ctx.sleep('rest', '1m');
    if (n >= input.until) return { done: n };
    return ctx.continueAsNew({ n, until: input.until });
  });
}

/** Every run of the chain starting at `first`, in order, read through the store. */
async function chain(env: CaseEnv, first: string): Promise<string[]> {
  const ids = [first];
  for (;;) {
    const run = await env.store.runs.get(ids[ids.length - 1] as string);
    const next =
      run?.output && typeof run.output === 'object' && !Array.isArray(run.output) ? (run.output as Record<string, unknown>)[CONTINUED_AS] : undefined;
    if (typeof next !== 'string') return ids;
    ids.push(next);
  }
}

/** Runs every run of the chain to its end; returns the chain. */
async function runChain(env: CaseEnv, w: { runToEnd(id: string): Promise<unknown> }, first: string): Promise<string[]> {
  for (;;) {
    const before = await chain(env, first);
    await w.runToEnd(before[before.length - 1] as string);
    const after = await chain(env, first);
    if (after.length === before.length) return after;
  }
}

/** Engine scenarios: continue-as-new keeps an endless workflow's history bounded. */
export const continueAsNewGroup: CaseGroup = caseGroup('engine.continue-as-new', 'engine: continue-as-new', [
  conformanceCase('a run continues as new: each run has a fresh history, the links are recorded both ways, result() follows the chain', async (env) => {
    const ran = new Map<string, number>();
    const wf = counter(ran);
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, { n: 0, until: 3 });
    const ids = await runChain(env, w, handle.id);
    assert.equal(ids.length, 3, `three runs: ${ids.join(', ')}`);
    const last = await env.store.runs.get(ids[2] as string);
    assert.deepEqual((await env.store.runs.get(ids[2] as string))?.output, { done: 3 });
    assert.equal(last?.workflow, 'counter');
    for (let i = 0; i < 2; i += 1) {
      const steps = await env.store.steps.load(ids[i] as string);
      assert.deepEqual(
        steps.map((s) => s.key),
        ['bump', 'rest', '$continue'],
        `run ${i} keeps only its own steps`,
      );
      assert.equal(steps[2]?.childRunId, ids[i + 1]);
      assert.equal((await env.store.runs.get(ids[i + 1] as string))?.idempotencyKey, `$continue:${ids[i]}`);
    }
    assert.deepEqual(await handle.result(), { done: 3 });
    assert.deepEqual([...ran.entries()].sort(), [
      ['bump-0', 1],
      ['bump-1', 1],
      ['bump-2', 1],
    ]);
  }),

  conformanceCase("a child that continues as new: its parent receives the last run's output, woken by its end", async (env) => {
    const ran = new Map<string, number>();
    const wf = counter(ran);
    const parent = defineWorkflow('counter-parent', async (ctx) => ({ got: await ctx.child(wf, { n: 0, until: 3 }) }));
    const w = await engineWorld(env, [parent, wf]);
    const handle = await w.engine.startRun(parent, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed', JSON.stringify(run.error));
    assert.deepEqual(run.output, { got: { done: 3 } });
    assert.deepEqual([...ran.entries()].sort(), [
      ['bump-0', 1],
      ['bump-1', 1],
      ['bump-2', 1],
    ]);
  }),

  conformanceCase('a crash at any fault point while continuing as new leaves exactly one successor per run', async (env) => {
    let fired = 0;
    for (const point of FAULT_POINTS) {
      for (const k of [1, 2, 3]) {
        const ran = new Map<string, number>();
        const wf = counter(ran);
        const faults = new CrashAt(point, k);
        const w = await engineWorld(env, [wf], { faults });
        const handle = await w.engine.startRun(wf, { n: 0, until: 2 });
        await w.runUntil(`${point} #${k} or the end`, async () => faults.crashed || (await env.store.runs.get(handle.id))?.status === 'completed');
        if (faults.crashed) fired += 1;
        await w.engine.stop();
        await w.startEngine([wf]);
        const ids = await runChain(env, w, handle.id);
        const where = `crash at ${point} #${k}`;
        assert.equal(ids.length, 2, `${where}: one successor (${ids.join(', ')})`);
        const all = await env.store.runs.list({ workflow: 'counter', limit: 100 });
        const mine = all.runs.filter((r) => r.id === handle.id || r.idempotencyKey === `$continue:${handle.id}`);
        assert.equal(mine.length, 2, `${where}: runs of this chain`);
        assert.deepEqual((await env.store.runs.get(ids[1] as string))?.output, { done: 2 }, where);
        await env.store.runs.delete(ids[0] as string);
        await env.store.runs.delete(ids[1] as string);
      }
    }
    assert.ok(fired >= FAULT_POINTS.length * 2, `crashes fired: ${fired}`);
  }),
]);
