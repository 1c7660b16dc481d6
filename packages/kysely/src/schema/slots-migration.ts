import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { dialectOf, detectDialect } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import type { TableNames } from './tables.js';
import { PRIORITY_COLUMN } from './added-columns.js';
import { runStatements } from './run-statements.js';

/** The index that serves "the waiters of a key in line order" (`priority` desc, `queued_at`; ties by holder are few). */
export const slotLineIndex = (names: TableNames): string => `${names.prefix}slot_waiters_line`;

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  const type = dialect.schema.columnType;
  const options = await dialect.schema.tableOptions(db);
  // The two tables are new here: a try that failed half-way (MySQL/MariaDB commit each DDL
  // statement) starts them over.
  for (const table of [names.slot_waiters, names.slots]) await db.schema.dropTable(table).ifExists().execute();
  // One row per slot: keys of any length are matched through their hash (MySQL cannot index a long
  // utf8mb4 VARCHAR); `holder` is the stored form of the holder, NULL when free; a row whose
  // `expires_at` has passed is free whatever `holder` says.
  await db.schema
    .createTable(names.slots)
    .addColumn('key_hash', type('hash'), (col) => col.notNull())
    .addColumn('idx', type('int'), (col) => col.notNull())
    .addColumn('holder', type('text'))
    .addColumn('expires_at', type('bigint'), (col) => col.notNull())
    .addPrimaryKeyConstraint(`${names.prefix}slots_pk`, ['key_hash', 'idx'])
    .modifyEnd(sql.raw(options))
    .execute();
  await db.schema
    .createTable(names.slot_waiters)
    .addColumn('key_hash', type('hash'), (col) => col.notNull())
    .addColumn('holder_hash', type('hash'), (col) => col.notNull())
    .addColumn('holder', type('ordered'), (col) => col.notNull())
    .addColumn('priority', type('int'), (col) => col.notNull())
    .addColumn('queued_at', type('bigint'), (col) => col.notNull())
    .addColumn('expires_at', type('bigint'), (col) => col.notNull())
    .addPrimaryKeyConstraint(`${names.prefix}slot_waiters_pk`, ['key_hash', 'holder_hash'])
    .modifyEnd(sql.raw(options))
    .execute();
  await db.schema.createIndex(slotLineIndex(names)).on(names.slot_waiters).columns(['key_hash', 'priority desc', 'queued_at']).execute();
  await dialect.schema.addColumnOnce(db, names.runs, PRIORITY_COLUMN, type('int'));
  // PostgreSQL functions / MySQL procedures for acquire and release (SQLite: none).
  await runStatements(db, await dialect.slotRoutines(db, names));
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  await runStatements(db, dialect.dropSlotRoutines(names));
  for (const table of [names.slot_waiters, names.slots]) await db.schema.dropTable(table).ifExists().execute();
  await db.schema.alterTable(names.runs).dropColumn(PRIORITY_COLUMN).execute();
}

/**
 * `cairn_0011_slots`: the nullable column `runs.priority` (`RunRecord.priority`; existing runs keep
 * NULL, read back as absent), the table `slots` (one row per slot of a key: `key_hash`, `idx` from
 * 0 to the limit - 1, `holder`, `expires_at`; created lazily by the store) and the table
 * `slot_waiters` (one row per waiting holder of a key: `key_hash`, `holder_hash`, `holder`,
 * `priority`, `queued_at`, `expires_at`) with its line-order index; on PostgreSQL and MySQL/MariaDB
 * the routines `<prefix>slot_acquire` and `<prefix>slot_release`. Down drops them all.
 */
export function slotsMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
