import { sql } from 'kysely';
import { CairnError } from '@cairn/core';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import { dropRoutines, installRoutines } from '../routines/install-routines.js';
import type { ColumnKind } from './column-types.js';
import { loadMigrator } from './load-migrator.js';
import { CAIRN_MIGRATION_NAMES } from './migration-names.js';
import type { CairnMigration, CairnMigrationProvider, CairnMigrationResultSet } from './migration-types.js';
import { eventMessagesMigration } from './event-messages-migration.js';
import { runDeadlineMigration } from './run-deadline-migration.js';
import { operationsMigration } from './operations-migration.js';
import { runTraceContextMigration } from './run-trace-context-migration.js';
import { runWorkflowStatusMigration } from './run-workflow-status-migration.js';
import { schedulesMigration } from './schedules-migration.js';
import { slotsMigration } from './slots-migration.js';
import { stepFinishedMigration } from './step-finished-migration.js';
import { stepInsertV2Migration } from './step-insert-v2-migration.js';
import { stepTurnMigration } from './step-turn-migration.js';
import { streamsMigration } from './streams-migration.js';
import { runPauseMigration } from './run-pause-migration.js';
import { bulkOperationsMigration } from './bulk-operations-migration.js';
import { runTagsMigration } from './run-tags-migration.js';
import { runWakePromiseMigration } from './run-wake-promise-migration.js';
import { tableNames, type TableNames } from './tables.js';

type ColumnSpec = readonly [name: string, kind: ColumnKind, nullable?: 'null'];

interface TableSpec {
  columns: readonly ColumnSpec[];
  primaryKey: readonly string[];
}

/**
 * The tables, column by column, as `cairn_0001_initial` creates them. Times are epoch-ms BIGINTs,
 * JSON is TEXT, flags are 0/1. Never changed once shipped: a later column is a migration of its
 * own (`steps.turn`: `cairn_0003_step_turn`; `runs.deadline`, `runs.cancel_reason`: `cairn_0004_run_deadline`;
 * `events` keyed by message: `cairn_0005_event_messages`; `runs.forked_from_*`, `retries_json` and
 * the parent and retention indexes: `cairn_0006_operations`; `runs.trace_context_json`:
 * `cairn_0007_run_trace_context`; `steps.fence`: `cairn_0008_step_finished`).
 */
const SCHEMA: Record<
  Exclude<keyof Omit<TableNames, 'prefix'>, 'schedules' | 'slots' | 'slot_waiters' | 'stream_entries' | 'pauses' | 'bulk_operations' | 'run_tags'>,
  TableSpec
> = {
  runs: {
    columns: [
      ['id', 'id'],
      ['workflow', 'name'],
      ['version', 'name'],
      ['input_json', 'json'],
      ['status', 'short'],
      ['output_json', 'json', 'null'],
      ['error_json', 'json', 'null'],
      ['parent_run_id', 'id', 'null'],
      ['parent_step_key', 'text', 'null'],
      ['idempotency_key', 'text', 'null'],
      ['idempotency_hash', 'hash', 'null'],
      ['lease_owner', 'text', 'null'],
      ['lease_expires_at', 'bigint', 'null'],
      ['fence', 'bigint'],
      ['cancel_requested', 'flag'],
      ['wake_at', 'bigint', 'null'],
      ['due_at', 'bigint', 'null'],
      ['created_at', 'bigint'],
      ['updated_at', 'bigint'],
    ],
    primaryKey: ['id'],
  },
  steps: {
    columns: [
      ['run_id', 'id'],
      ['key_hash', 'hash'],
      ['step_key', 'text'],
      ['name', 'text'],
      ['kind', 'short'],
      ['seq', 'int'],
      ['status', 'short'],
      ['attempt', 'int'],
      ['max_attempts', 'int'],
      ['queued', 'flag'],
      ['output_json', 'json', 'null'],
      ['error_json', 'json', 'null'],
      ['wake_at', 'bigint', 'null'],
      ['child_run_id', 'id', 'null'],
      ['created_at', 'bigint'],
      ['updated_at', 'bigint'],
    ],
    primaryKey: ['run_id', 'key_hash'],
  },
  attempts: {
    columns: [
      ['run_id', 'id'],
      ['key_hash', 'hash'],
      ['attempt', 'int'],
      ['step_key', 'text'],
      ['step_seq', 'int'],
      ['status', 'short'],
      ['worker', 'text', 'null'],
      ['started_at', 'bigint'],
      ['ended_at', 'bigint', 'null'],
      ['output_json', 'json', 'null'],
      ['error_json', 'json', 'null'],
    ],
    primaryKey: ['run_id', 'key_hash', 'attempt'],
  },
  state: {
    columns: [
      ['run_id', 'id'],
      ['key_hash', 'hash'],
      ['state_key', 'text'],
      ['value_json', 'json'],
      ['updated_at', 'bigint'],
    ],
    primaryKey: ['run_id', 'key_hash'],
  },
  events: {
    columns: [
      ['run_id', 'id'],
      ['name_hash', 'hash'],
      ['name', 'text'],
      ['payload_json', 'json'],
      ['delivered_at', 'bigint'],
    ],
    primaryKey: ['run_id', 'name_hash'],
  },
  versions: {
    columns: [
      ['workflow', 'name'],
      ['version', 'name'],
      ['status', 'short'],
      ['descriptor_json', 'json'],
      ['created_at', 'bigint'],
      ['updated_at', 'bigint'],
    ],
    primaryKey: ['workflow', 'version'],
  },
};

/** Secondary indexes: one for every query the store issues that is not a primary-key lookup. */
const INDEXES: ReadonlyArray<{ table: keyof typeof SCHEMA; name: string; columns: string[]; unique?: boolean; partial?: string }> = [
  { table: 'runs', name: 'runs_status_created', columns: ['status', 'created_at', 'id'] },
  { table: 'runs', name: 'runs_workflow_created', columns: ['workflow', 'created_at', 'id'] },
  { table: 'runs', name: 'runs_created', columns: ['created_at', 'id'] },
  { table: 'runs', name: 'runs_idempotency', columns: ['workflow', 'idempotency_hash'], unique: true },
  { table: 'runs', name: 'runs_due', columns: ['due_at', 'id'], partial: 'due_at is not null' },
  { table: 'steps', name: 'steps_run_seq', columns: ['run_id', 'seq'] },
  { table: 'attempts', name: 'attempts_history', columns: ['run_id', 'started_at', 'step_seq', 'attempt'] },
];

async function createSchema(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  const tableOptions = await dialect.schema.tableOptions(db);
  for (const [table, spec] of Object.entries(SCHEMA) as [keyof typeof SCHEMA, TableSpec][]) {
    let builder = db.schema.createTable(names[table]);
    for (const [column, kind, nullable] of spec.columns) {
      builder = builder.addColumn(column, dialect.schema.columnType(kind), (col) => (nullable ? col : col.notNull()));
    }
    builder = builder.addPrimaryKeyConstraint(`${names.prefix}${table}_pk`, spec.primaryKey as never);
    if (tableOptions) builder = builder.modifyEnd(sql.raw(tableOptions));
    await builder.execute();
  }
  for (const index of INDEXES) {
    let builder = db.schema.createIndex(`${names.prefix}${index.name}`).on(names[index.table]).columns(index.columns);
    if (index.unique) builder = builder.unique();
    // Where the dialect has no partial index, it indexes every row.
    if (index.partial && dialect.schema.partialIndexes) builder = builder.where(sql.raw<boolean>(index.partial));
    await builder.execute();
  }
}

async function dropSchema(db: AnyKysely, names: TableNames): Promise<void> {
  for (const table of ['attempts', 'steps', 'state', 'events', 'versions', 'runs'] as const) {
    await db.schema.dropTable(names[table]).ifExists().execute();
  }
}

/** Options of `cairnMigrations` and `migrateToLatest`. */
export interface CairnMigrationOptions {
  /** Prefix of every table and index name (default `cairn_`). */
  tablePrefix?: string;
}

export { CAIRN_MIGRATION_NAMES } from './migration-names.js';

/**
 * The store's schema as Kysely migrations, for your own `Migrator` (or merge its
 * `getMigrations()` into your provider's). The dialect is detected from the Kysely instance the
 * migrator passes in. Nothing creates tables behind your back: run these, or `migrateToLatest`.
 */
export function cairnMigrations(options: CairnMigrationOptions | string = {}): CairnMigrationProvider {
  const prefix = typeof options === 'string' ? options : (options.tablePrefix ?? 'cairn_');
  const names = tableNames(prefix);
  const initial: CairnMigration = {
    up: (db) => createSchema(db, names, dialectOf(detectDialect(db))),
    down: (db) => dropSchema(db, names),
  };
  // PostgreSQL functions / MySQL procedures for the two step writes (SQLite: two triggers), as
  // they were when this migration shipped; cairn_0003_step_turn replaces them.
  const stepRoutines: CairnMigration = {
    up: (db) => installRoutines(db, names, detectDialect(db)),
    down: (db) => dropRoutines(db, names, detectDialect(db)),
  };
  return {
    getMigrations: async () => ({
      [CAIRN_MIGRATION_NAMES[0]]: initial,
      [CAIRN_MIGRATION_NAMES[1]]: stepRoutines,
      [CAIRN_MIGRATION_NAMES[2]]: stepTurnMigration(names),
      [CAIRN_MIGRATION_NAMES[3]]: runDeadlineMigration(names),
      [CAIRN_MIGRATION_NAMES[4]]: eventMessagesMigration(names),
      [CAIRN_MIGRATION_NAMES[5]]: operationsMigration(names),
      [CAIRN_MIGRATION_NAMES[6]]: runTraceContextMigration(names),
      [CAIRN_MIGRATION_NAMES[7]]: stepFinishedMigration(names),
      [CAIRN_MIGRATION_NAMES[8]]: schedulesMigration(names),
      [CAIRN_MIGRATION_NAMES[9]]: slotsMigration(names),
      [CAIRN_MIGRATION_NAMES[10]]: stepInsertV2Migration(names),
      [CAIRN_MIGRATION_NAMES[11]]: streamsMigration(names),
      [CAIRN_MIGRATION_NAMES[12]]: runWorkflowStatusMigration(names),
      [CAIRN_MIGRATION_NAMES[13]]: runPauseMigration(names),
      [CAIRN_MIGRATION_NAMES[14]]: bulkOperationsMigration(names),
      [CAIRN_MIGRATION_NAMES[15]]: runTagsMigration(names),
      [CAIRN_MIGRATION_NAMES[16]]: runWakePromiseMigration(names),
    }),
  };
}

/**
 * Brings the store's tables up to date with a `Migrator` of its own, whose bookkeeping tables are
 * `<prefix>migrations` and `<prefix>migrations_lock` (so several prefixes can share a database).
 * Throws `STORE_ERROR` when a migration fails; returns the results otherwise.
 */
export async function migrateToLatest(db: AnyKysely, options: CairnMigrationOptions = {}): Promise<CairnMigrationResultSet> {
  const prefix = options.tablePrefix ?? 'cairn_';
  tableNames(prefix);
  const Migrator = await loadMigrator();
  const migrator = new Migrator({
    db,
    provider: cairnMigrations({ tablePrefix: prefix }),
    migrationTableName: `${prefix}migrations`,
    migrationLockTableName: `${prefix}migrations_lock`,
  });
  // Kysely's Migrator serialises migrations with its lock table, but two processes creating the
  // bookkeeping tables at the same moment can collide: retry, and the second try finds them.
  let result = await migrator.migrateToLatest();
  for (let attempt = 1; result.error !== undefined && attempt < 3; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25 * attempt));
    result = await migrator.migrateToLatest();
  }
  if (result.error !== undefined) {
    const message = result.error instanceof Error ? result.error.message : String(result.error);
    throw new CairnError('STORE_ERROR', `Cairn migrations failed: ${message}`, { cause: result.error });
  }
  return result;
}
