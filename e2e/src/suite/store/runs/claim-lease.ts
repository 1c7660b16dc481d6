import assert from 'node:assert/strict';
import type { RunRecord } from '@cairn/core';
import { conformanceCase, type ConformanceCase } from '../../case.js';
import { assertSameRecord, rejectsWithCode } from '../../fixtures/assertions.js';
import { LEASE_MS, createRun, runningRun, takeOver, terminalRun } from '../../fixtures/run-fixtures.js';
import { uuidv7 } from '../../fixtures/uuid-v7.js';

/** Store contract: `runs.claim` and `runs.renew`: taking and keeping a run's lease, fencing. */
export const runClaimLeaseCases: ConformanceCase[] = [
  conformanceCase('claim: a pending run becomes running with fence 1, a lease, and wakeAt cleared', async ({ store, t0 }) => {
    const created = await createRun(store, t0, { wakeAt: t0 });
    const run = await store.runs.claim(created.id, 'worker-a', 5_000, t0 + 1);
    assert.ok(run);
    assert.equal(run.status, 'running');
    assert.equal(run.fence, 1);
    assert.deepEqual(run.lease, { owner: 'worker-a', expiresAt: t0 + 5_001 });
    assert.equal(run.wakeAt, undefined, 'claim clears wakeAt');
    assert.equal(run.updatedAt, t0 + 1);
    assertSameRecord(await store.runs.get(created.id), run, 'claim returns the stored run');
  }),

  conformanceCase('claim: a live lease of another owner refuses, writing nothing', async ({ store, t0 }) => {
    const { run } = await runningRun(store, t0, {}, 'worker-a');
    const before = await store.runs.get(run.id);
    assert.equal(await store.runs.claim(run.id, 'worker-b', LEASE_MS, t0 + LEASE_MS - 1), undefined);
    assert.deepEqual(await store.runs.get(run.id), before);
  }),

  conformanceCase('claim: an expired lease (expiresAt <= now) is taken over and the fence increments', async ({ store, t0 }) => {
    const { run } = await runningRun(store, t0, {}, 'worker-a');
    const taken = await store.runs.claim(run.id, 'worker-b', 1_000, t0 + LEASE_MS);
    assert.ok(taken, 'a lease expiring exactly now is expired');
    assert.equal(taken.fence, 2);
    assert.deepEqual(taken.lease, { owner: 'worker-b', expiresAt: t0 + LEASE_MS + 1_000 });
  }),

  conformanceCase('claim: the same owner may claim again while its lease lives, with a new fence', async ({ store, t0 }) => {
    const { run } = await runningRun(store, t0, {}, 'worker-a');
    const again = await store.runs.claim(run.id, 'worker-a', 1_000, t0 + 5);
    assert.ok(again);
    assert.equal(again.fence, 2);
    assert.deepEqual(again.lease, { owner: 'worker-a', expiresAt: t0 + 1_005 });
  }),

  conformanceCase('claim: a waiting run can be claimed', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.runs.transition(run.id, fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 100 }, t0 + 1);
    const again = await store.runs.claim(run.id, 'worker-b', LEASE_MS, t0 + 100);
    assert.ok(again);
    assert.equal(again.status, 'running');
    assert.equal(again.fence, 2);
    assert.equal(again.wakeAt, undefined);
  }),

  conformanceCase('claim: terminal and missing runs refuse, writing nothing', async ({ store, t0 }) => {
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const run = await terminalRun(store, t0, status);
      const before = await store.runs.get(run.id);
      assert.equal(await store.runs.claim(run.id, 'worker-b', LEASE_MS, t0 + LEASE_MS * 2), undefined, `a ${status} run`);
      assert.deepEqual(await store.runs.get(run.id), before, `a ${status} run must not change`);
    }
    assert.equal(await store.runs.claim(uuidv7(), 'worker-b', LEASE_MS, t0), undefined);
  }),

  conformanceCase('claim: of 8 concurrent claimers exactly one wins', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    const owners = Array.from({ length: 8 }, (_, i) => `worker-${i}`);
    const results = await Promise.all(owners.map((o) => store.runs.claim(run.id, o, LEASE_MS, t0 + 1)));
    const winners = results.filter((r): r is RunRecord => r !== undefined);
    assert.equal(winners.length, 1, `exactly one claim must win, ${winners.length} did`);
    const stored = await store.runs.get(run.id);
    assert.equal(stored?.fence, 1, 'only one claim may increment the fence');
    assert.equal(stored?.lease?.owner, winners[0]?.lease?.owner);
  }),
  conformanceCase('renew: extends the lease and returns the run with cancelRequested', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.runs.requestCancel(run.id, t0 + 1);
    const renewed = await store.runs.renew(run.id, fence, 60_000, t0 + 10);
    assert.deepEqual(renewed.lease, { owner: 'worker-a', expiresAt: t0 + 60_010 });
    assert.equal(renewed.cancelRequested, true);
    assert.equal(renewed.fence, fence, 'renew keeps the fence');
    assert.deepEqual((await store.runs.get(run.id))?.lease, renewed.lease);
  }),

  conformanceCase('renew: a stale fence is LEASE_LOST and the new holder keeps its lease', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, {}, 'worker-a');
    await takeOver(store, run.id, 'worker-b', t0 + LEASE_MS);
    const before = await store.runs.get(run.id);
    await rejectsWithCode(store.runs.renew(run.id, fence, 60_000, t0 + LEASE_MS + 1), 'LEASE_LOST');
    assert.deepEqual(await store.runs.get(run.id), before);
  }),

  conformanceCase('renew: a terminal run is LEASE_LOST', async ({ store, t0 }) => {
    const run = await terminalRun(store, t0);
    const before = await store.runs.get(run.id);
    await rejectsWithCode(store.runs.renew(run.id, run.fence, 60_000, t0 + 1), 'LEASE_LOST');
    assert.deepEqual(await store.runs.get(run.id), before);
  }),
];
