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

  conformanceCase('claim: a wake-up asked for later than the claim survives it, and the next waiting transition is no later', async ({ store, t0 }) => {
    // A child about to end asks its parent for attention within a lease (the pre-wake) before its
    // final write. A claim of the parent landing between the two must not drop that promise: the
    // parent may have read the child still running, and the child may die before its real wake-up.
    for (const from of ['waiting', 'running'] as const) {
      const { run, fence } = await runningRun(store, t0);
      let holder = 'worker-a';
      if (from === 'waiting') {
        await store.runs.transition(run.id, fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 3_600_000 }, t0 + 1);
        holder = 'worker-b';
      }
      // A running run is taken over once its holder's lease ran out; a waiting one at once.
      const claimAt = from === 'waiting' ? t0 + 2 : t0 + LEASE_MS;
      const promised = claimAt + 20_000;
      await store.runs.wake(run.id, promised);
      const claimed = await store.runs.claim(run.id, 'worker-c', LEASE_MS, claimAt);
      assert.ok(claimed, `a ${from} run (held by ${holder}) is claimed`);
      assert.equal(claimed.wakeAt, promised, `a ${from} run keeps the wake-up asked for later`);
      assertSameRecord(await store.runs.get(run.id), claimed, 'claim returns the stored run');
      const waiting = await store.runs.transition(run.id, claimed.fence, { from: ['running'], to: 'waiting', wakeAt: claimAt + 3_600_000 }, claimAt + 1);
      assert.equal(waiting.wakeAt, promised, `the ${from} run waits no later than the kept wake-up`);
      assertSameRecord(await store.runs.get(run.id), waiting, 'the transition returns the stored run');
    }
    // A wake-up that is due when the claim lands is news the claimer sees by replaying: cleared.
    const due = await runningRun(store, t0);
    await store.runs.transition(due.run.id, due.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 3_600_000 }, t0 + 1);
    await store.runs.wake(due.run.id, t0 + 5);
    const claimedDue = await store.runs.claim(due.run.id, 'worker-b', LEASE_MS, t0 + 5);
    assert.equal(claimedDue?.wakeAt, undefined, 'a due wake-up (wakeAt <= now) is cleared');
    // A pending run's wakeAt is its start grace, not a promise: the claim clears it.
    const pending = await createRun(store, t0, { wakeAt: t0 + 30_000 });
    const claimedPending = await store.runs.claim(pending.id, 'worker-b', LEASE_MS, t0 + 1);
    assert.equal(claimedPending?.wakeAt, undefined, "a pending run's start grace is cleared");
  }),

  conformanceCase(
    'promiseWake: a promised wake-up survives a claim that takes a due one, and the next waiting transition is no later',
    async ({ store, t0 }) => {
      // The race of decision 78: a parent woken by a sibling's end (due news) is promised its other
      // child's end; the claim for the news must leave the promise, which a plain wake merged away.
      const { run, fence } = await runningRun(store, t0);
      await store.runs.transition(run.id, fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 3_600_000 }, t0 + 1);
      await store.runs.wake(run.id, t0 + 5);
      await store.runs.promiseWake!(run.id, t0 + 30_000, t0 + 6);
      const stored = await store.runs.get(run.id);
      assert.equal(stored?.wakeAt, t0 + 5, 'a promise never delays the run: wakeAt is the earlier');
      assert.equal(stored?.updatedAt, t0 + 6);
      const claimed = await store.runs.claim(run.id, 'worker-b', LEASE_MS, t0 + 10);
      assert.ok(claimed);
      assert.equal(claimed.wakeAt, t0 + 30_000, 'the claim takes the due news and keeps the promise');
      const waiting = await store.runs.transition(run.id, claimed.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 3_600_000 }, t0 + 11);
      assert.equal(waiting.wakeAt, t0 + 30_000, 'the run waits no later than the promise');
      // Claimed when the promise is due, the promise is news: cleared, and forgotten with its count.
      const later = await store.runs.claim(run.id, 'worker-c', LEASE_MS, t0 + 30_000);
      assert.equal(later?.wakeAt, undefined, 'a due promise is cleared with the claim');
      const again = await store.runs.transition(run.id, later!.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 3_600_000 }, t0 + 30_001);
      assert.equal(again.wakeAt, t0 + 3_600_000, 'a promise whose time came is forgotten');

      // Kept promises: each keepPromise wakes the run and settles one; the last one forgets it, so
      // a claim after it leaves nothing to replay for (no replay at the promised time).
      const two = await runningRun(store, t0);
      await store.runs.transition(two.run.id, two.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 3_600_000 }, t0 + 1);
      await store.runs.promiseWake!(two.run.id, t0 + 30_000, t0 + 2);
      await store.runs.promiseWake!(two.run.id, t0 + 30_000, t0 + 2);
      await store.runs.keepPromise!(two.run.id, t0 + 3);
      assert.equal((await store.runs.get(two.run.id))?.wakeAt, t0 + 3, 'keepPromise wakes the run as wake does');
      const one = await store.runs.claim(two.run.id, 'worker-b', LEASE_MS, t0 + 4);
      assert.equal(one?.wakeAt, t0 + 30_000, 'one promise is still outstanding: the claim keeps it');
      const waitingOne = await store.runs.transition(two.run.id, one!.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 3_600_000 }, t0 + 5);
      assert.equal(waitingOne.wakeAt, t0 + 30_000);
      await store.runs.keepPromise!(two.run.id, t0 + 6);
      const none = await store.runs.claim(two.run.id, 'worker-c', LEASE_MS, t0 + 6);
      assert.equal(none?.wakeAt, undefined, 'every promise kept: the claim leaves no wakeAt');
      const waitingNone = await store.runs.transition(two.run.id, none!.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 3_600_000 }, t0 + 7);
      assert.equal(waitingNone.wakeAt, t0 + 3_600_000, 'nothing promised is left to wake the run early');
      // A keepPromise with nothing outstanding is a wake-up and nothing more.
      await store.runs.keepPromise!(two.run.id, t0 + 8);
      const plain = await store.runs.claim(two.run.id, 'worker-d', LEASE_MS, t0 + 8);
      assert.equal(plain?.wakeAt, undefined);

      // A promise to a running run (its holder has not suspended yet) is kept by its suspension,
      // and by a claim of whoever takes the run over before it.
      const held = await runningRun(store, t0);
      await store.runs.promiseWake!(held.run.id, t0 + LEASE_MS + 20_000, t0 + 2);
      const taken = await store.runs.claim(held.run.id, 'worker-b', LEASE_MS, t0 + LEASE_MS);
      assert.equal(taken?.wakeAt, t0 + LEASE_MS + 20_000, 'a take-over keeps the promise');

      // Terminal and missing runs: nothing is written.
      const done = await terminalRun(store, t0);
      const before = await store.runs.get(done.id);
      await store.runs.promiseWake!(done.id, t0 + 30_000, t0 + 50);
      assert.deepEqual(await store.runs.get(done.id), before, 'a terminal run is left as it is');
      await store.runs.promiseWake!(uuidv7(), t0 + 30_000, t0 + 50);
    },
    { requires: ['promiseWake'] },
  ),

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
