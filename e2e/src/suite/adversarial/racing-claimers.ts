import assert from 'node:assert/strict';
import type { RunRecord } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { LEASE_MS, createRun, runningRun } from '../fixtures/run-fixtures.js';

const winners = (results: Array<RunRecord | undefined>) => results.filter((r): r is RunRecord => r !== undefined);

/** Races `racers` claims of `runId` (racer i uses `stores[i % stores.length]`) and checks one won. */
async function race(stores: WorkflowStore[], runId: string, now: number, expectedFence: number, racers = 8): Promise<RunRecord> {
  const results = await Promise.all(Array.from({ length: racers }, (_, i) => stores[i % stores.length]!.runs.claim(runId, `racer-${i}`, LEASE_MS, now)));
  const won = winners(results);
  assert.equal(won.length, 1, `exactly one of ${racers} claimers must win, ${won.length} did (${won.map((r) => r.lease?.owner).join(', ')})`);
  const stored = await stores[0]!.runs.get(runId);
  assert.equal(stored?.fence, expectedFence, 'only the winner may increment the fence');
  assert.equal(stored?.lease?.owner, won[0]?.lease?.owner, 'the stored lease is the winner’s');
  return won[0]!;
}

/** Adversarial: racing claimers. */
export const racingClaimersGroup: CaseGroup = caseGroup('adversarial.racing-claimers', 'adversarial: racing claimers', [
  conformanceCase('8 claimers of each of 10 fresh runs: exactly one wins every time', async ({ store, t0 }) => {
    const runs = await Promise.all(Array.from({ length: 10 }, () => createRun(store, t0)));
    await Promise.all(runs.map((run) => race([store], run.id, t0 + 1, 1)));
  }),

  conformanceCase('8 claimers of an expired lease: exactly one takes it over, and again when that one expires', async ({ store, t0 }) => {
    const { run } = await runningRun(store, t0, {}, 'first-owner');
    const second = await race([store], run.id, t0 + LEASE_MS, 2);
    const third = await race([store], run.id, (second.lease?.expiresAt ?? 0) + 1, 3);
    assert.notEqual(third.lease?.owner, undefined);
  }),

  conformanceCase(
    '8 claimers spread over 4 store instances on one namespace: exactly one wins',
    async (env) => {
      const peers = [env.store, await env.openPeer(), await env.openPeer(), await env.openPeer()];
      const run = await createRun(env.store, env.t0);
      assert.equal((await peers[3]!.runs.get(run.id))?.id, run.id, 'every instance sees the run');
      await race(peers, run.id, env.t0 + 1, 1);
      await race(peers, run.id, env.t0 + 1 + LEASE_MS, 2);
    },
    { requires: ['multiProcess'] },
  ),
]);
