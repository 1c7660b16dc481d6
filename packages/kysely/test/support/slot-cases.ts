import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import type { SlotStore, WorkflowStore } from '@cairn/core/backend';
import { CAIRN_MIGRATION_NAMES, createKyselyStore } from '../../src/index.js';
import { atMigrationBefore } from './migration-upgrade.js';
import type { AnyDb } from './databases.js';
import { dropPrefix } from './harness.js';
import { prefixedMigrator } from './prefixed-migrator.js';
import type { Target } from './targets.js';

const T0 = 1_750_000_000_000;
const MIGRATION = 'cairn_0011_slots';

function slotsOf(store: WorkflowStore): SlotStore {
  assert.ok(store.slots, 'the Kysely store has slots');
  return store.slots;
}

/**
 * The SQL-specific slot cases (the contract itself is the conformance group `store.slots`):
 * `cairn_0011_slots` on a database at the migration before it (runs keep their data, `priority`
 * is stored from then on, down and up again), and grants racing over separate connections, where
 * only the database can keep the count. Registered inside `storeCases`.
 */
export function slotCases(target: Target): void {
  it(`${MIGRATION} upgrades a database at the migration before it; old runs have no priority; down and up again`, async () => {
    await atMigrationBefore(target, MIGRATION, async ({ migrator, store, index }) => {
      const { run: old } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: { a: 1 } }, T0);

      const up = await migrator.migrateTo(CAIRN_MIGRATION_NAMES[index]!);
      assert.equal(up.error, undefined, `migration failed: ${String(up.error)}`);
      assert.deepEqual(
        up.results?.map((r) => [r.migrationName, r.status]),
        [[MIGRATION, 'Success']],
      );
      const before = await store.runs.get(old.id);
      assert.deepEqual([before?.input, 'priority' in before!], [{ a: 1 }, false]);
      const { run: urgent } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null, priority: -1000 }, T0);
      const { run: plain } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null, priority: 0 }, T0);
      assert.equal(urgent.priority, -1000);
      assert.equal((await store.runs.get(urgent.id))?.priority, -1000);
      assert.equal('priority' in (await store.runs.get(plain.id))!, false, 'priority 0 is stored absent');
      assert.deepEqual((await store.runs.list({ limit: 10 })).runs.map((r) => r.priority ?? 0).sort(), [-1000, 0, 0]);
      assert.deepEqual(await slotsOf(store).acquire({ key: 'k', limit: 1, holder: 'h', expiresAt: T0 + 10 }, T0), { acquired: true });

      const down = await migrator.migrateDown();
      assert.equal(down.error, undefined, `migration failed: ${String(down.error)}`);
      assert.deepEqual(
        down.results?.map((r) => [r.migrationName, r.direction, r.status]),
        [[MIGRATION, 'Down', 'Success']],
      );
      const after = await store.runs.get(urgent.id);
      assert.deepEqual([after?.status, 'priority' in after!], ['pending', false]);
      assert.deepEqual(
        (await store.runs.list({ limit: 10 })).runs.map((r) => 'priority' in r),
        [false, false, false],
        'a database before it still lists its runs',
      );
      const { created } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null }, T0);
      assert.equal(created, true, 'a run without a priority is created before the migration');

      assert.equal((await migrator.migrateTo(CAIRN_MIGRATION_NAMES[index]!)).error, undefined);
      const { run: again } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null, priority: 7 }, T0);
      assert.equal((await store.runs.get(again.id))?.priority, 7);
      assert.deepEqual(await slotsOf(store).inspect('k', T0), { holders: [], waiters: [] }, 'down dropped the slot tables');
    });
  });

  it('slots: 24 acquires racing over 4 connections for a key of 3 slots grant exactly 3; waiters line up by priority', async () => {
    const dbs: AnyDb[] = [await target.open()];
    const { prefix, migrator } = prefixedMigrator(dbs[0]!);
    try {
      assert.equal((await migrator.migrateToLatest()).error, undefined);
      while (dbs.length < 4) dbs.push(await target.open());
      const stores = dbs.map((db) => slotsOf(createKyselyStore({ db, tablePrefix: prefix })));
      // A long key of every kind of character: it must reach every connection as the same key.
      const key = `c:tenant 'x' "y" %_\\ 😀 ${'é'.repeat(480)} `;
      const grants = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          stores[i % 4]!.acquire(
            {
              key,
              limit: 3,
              holder: `run-${String(i).padStart(2, '0')}`,
              expiresAt: T0 + 60_000,
              wait: { priority: i % 3, queuedAt: T0, expiresAt: T0 + 60_000 },
            },
            T0,
          ),
        ),
      );
      assert.equal(grants.filter((g) => g.acquired).length, 3);
      const seen = await stores[1]!.inspect(key, T0);
      assert.equal(seen.holders.length, 3);
      assert.equal(seen.waiters.length, 21);
      const line = seen.waiters.map((w) => [w.priority, w.holder]);
      assert.deepEqual(
        line,
        [...line].sort((a, b) => (b[0] as number) - (a[0] as number) || String(a[1]).localeCompare(String(b[1]))),
      );
      // Releasing one holder names the first in line, which then gets the slot.
      const first = seen.waiters[0]!.holder;
      assert.equal(await stores[2]!.release(key, seen.holders[0]!.holder, T0), first);
      assert.deepEqual(
        await stores[3]!.acquire({ key, limit: 3, holder: first, expiresAt: T0 + 60_000, wait: { priority: 2, queuedAt: T0, expiresAt: T0 + 60_000 } }, T0),
        { acquired: true },
      );
      assert.equal((await stores[0]!.inspect(key, T0)).waiters.length, 20);
    } finally {
      await dropPrefix(dbs[0]!, prefix);
      for (const db of dbs) await db.destroy();
    }
  });
}
