import assert from 'node:assert/strict';
import type { Migrator } from 'kysely/migration';
import type { WorkflowStore } from '@cairn/core/backend';
import { CAIRN_MIGRATION_NAMES, createKyselyStore } from '../../src/index.js';
import type { AnyDb } from './databases.js';
import { dropPrefix } from './harness.js';
import { prefixedMigrator } from './prefixed-migrator.js';
import type { Target } from './targets.js';

/** What an upgrade case works with: a database at the migration before `migration`, and a store on it. */
export interface UpgradeWorld {
  db: AnyDb;
  migrator: Migrator;
  store: WorkflowStore;
  /** The index of the migration under test in `CAIRN_MIGRATION_NAMES`. */
  index: number;
}

/**
 * Runs `fn` on a fresh table prefix migrated up to the migration before `migration` (so the case
 * can write data the old way, then migrate up, down and up again), and drops the prefix after.
 */
export async function atMigrationBefore(target: Target, migration: string, fn: (world: UpgradeWorld) => Promise<void>): Promise<void> {
  const index = CAIRN_MIGRATION_NAMES.indexOf(migration as never);
  assert.ok(index > 0, `${migration} is shipped`);
  const db = await target.open();
  const { prefix, migrator } = prefixedMigrator(db);
  try {
    assert.equal((await migrator.migrateTo(CAIRN_MIGRATION_NAMES[index - 1]!)).error, undefined);
    await fn({ db, migrator, store: createKyselyStore({ db, tablePrefix: prefix }), index });
  } finally {
    await dropPrefix(db, prefix);
    await db.destroy();
  }
}

/** Migrates `world` up by its migration under test (`migration`), asserting that exactly it ran and succeeded. */
export async function upByOne(world: UpgradeWorld, migration: string): Promise<void> {
  const up = await world.migrator.migrateTo(CAIRN_MIGRATION_NAMES[world.index]!);
  assert.equal(up.error, undefined, `migration failed: ${String(up.error)}`);
  assert.deepEqual(
    up.results?.map((r) => [r.migrationName, r.status]),
    [[migration, 'Success']],
  );
}

/** Migrates `world` down by its migration under test (`migration`), asserting that exactly it went down. */
export async function downByOne(world: UpgradeWorld, migration: string): Promise<void> {
  const down = await world.migrator.migrateDown();
  assert.equal(down.error, undefined, `migration failed: ${String(down.error)}`);
  assert.deepEqual(
    down.results?.map((r) => [r.migrationName, r.direction, r.status]),
    [[migration, 'Down', 'Success']],
  );
}
