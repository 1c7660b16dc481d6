import assert from 'node:assert/strict';
import { defineWorkflow, type Json } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { runningRun } from '../fixtures/run-fixtures.js';
import { engineWorld } from '../engine/engine-world.js';

/** Adversarial: concurrent writers of one run's state. */
export const concurrentStateGroup: CaseGroup = caseGroup('adversarial.concurrent-state', 'adversarial: concurrent state writers', [
  conformanceCase('a workflow setting 25 keys at once through Promise.all loses none', async (env) => {
    const keys = Array.from({ length: 25 }, (_, i) => `key.${i}`);
    const wf = defineWorkflow('state-fan-out', async (ctx) => {
      await Promise.all(keys.map((k, i) => ctx.setState(k, { i })));
      return 'done';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runToEnd(handle.id);
    const expected: Record<string, Json> = {};
    for (const [i, k] of keys.entries()) expected[k] = { i };
    assert.deepStrictEqual(await w.engine.state(handle.id), expected);
  }),

  conformanceCase('writers of different keys interleaved with overwrites lose nothing (10 rounds)', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const expected: Record<string, Json> = {};
    for (let round = 0; round < 10; round += 1) {
      // Each round overwrites the previous round's keys and adds new ones, all at once.
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => {
          expected[`k${i}`] = round;
          expected[`r${round}-${i}`] = i;
          return Promise.all([store.state.set(run.id, fence, `k${i}`, round, t0 + round), store.state.set(run.id, null, `r${round}-${i}`, i, t0 + round)]);
        }),
      );
    }
    assert.deepStrictEqual(await store.state.get(run.id), expected);
  }),

  conformanceCase(
    'writers on 4 store instances setting 40 keys at once lose none',
    async (env) => {
      const peers = [env.store, await env.openPeer(), await env.openPeer(), await env.openPeer()];
      const { run, fence } = await runningRun(env.store, env.t0);
      await Promise.all(Array.from({ length: 40 }, (_, i) => peers[i % 4]!.state.set(run.id, fence, `k${i}`, i, env.t0)));
      const expected: Record<string, Json> = {};
      for (let i = 0; i < 40; i += 1) expected[`k${i}`] = i;
      for (const peer of peers) assert.deepStrictEqual(await peer.state.get(run.id), expected);
    },
    { requires: ['multiProcess'] },
  ),
]);
