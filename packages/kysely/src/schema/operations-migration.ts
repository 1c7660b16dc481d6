import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect } from '../dialect/detect.js';
import type { AnyKysely, SqlDialectName } from '../dialect/types.js';
import { columnType, type ColumnKind } from './column-types.js';
import { mysqlHasColumn } from './mysql-has-column.js';
import type { TableNames } from './tables.js';

/** The columns `cairn_0006_operations` adds to `runs`: `RunRecord.forkedFrom` and `retries`. */
export const OPERATIONS_COLUMNS: ReadonlyArray<readonly [name: string, kind: ColumnKind]> = [
  ['forked_from_run_id', 'id'],
  ['forked_from_step_key', 'text'],
  ['retries_json', 'json'],
];

/** Its indexes: `runs.list` by parent (+ time), and retention's `runs.listEnded` (status + updated time). */
export const OPERATIONS_INDEXES: ReadonlyArray<{ name: string; columns: string[] }> = [
  { name: 'runs_parent_created', columns: ['parent_run_id', 'created_at', 'id'] },
  { name: 'runs_status_updated', columns: ['status', 'updated_at', 'id'] },
];

async function mysqlHasIndex(db: AnyKysely, table: string, index: string): Promise<boolean> {
  const { rows } = await sql<{ n: unknown }>`select count(*) as n from information_schema.statistics
    where table_schema = database() and table_name = ${table} and index_name = ${index}`.execute(db);
  return Number(rows[0]?.n ?? 0) > 0;
}

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  // MySQL/MariaDB commit each DDL statement: a try that failed halfway must be able to run again.
  for (const [column, kind] of OPERATIONS_COLUMNS) {
    if (dialect === 'mysql' && (await mysqlHasColumn(db, names.runs, column))) continue;
    await db.schema.alterTable(names.runs).addColumn(column, columnType(dialect, kind)).execute();
  }
  for (const index of OPERATIONS_INDEXES) {
    const name = `${names.prefix}${index.name}`;
    if (dialect === 'mysql' && (await mysqlHasIndex(db, names.runs, name))) continue;
    await db.schema.createIndex(name).on(names.runs).columns(index.columns).execute();
  }
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  for (const index of OPERATIONS_INDEXES) {
    const name = `${names.prefix}${index.name}`;
    if (dialect === 'mysql') {
      if (await mysqlHasIndex(db, names.runs, name)) await sql`drop index ${sql.id(name)} on ${sql.table(names.runs)}`.execute(db);
    } else {
      await db.schema.dropIndex(name).ifExists().execute();
    }
  }
  for (const [column] of [...OPERATIONS_COLUMNS].reverse()) {
    if (dialect !== 'mysql' || (await mysqlHasColumn(db, names.runs, column))) await db.schema.alterTable(names.runs).dropColumn(column).execute();
  }
}

/**
 * `cairn_0006_operations`: the nullable columns `runs.forked_from_run_id`, `forked_from_step_key`
 * (`RunRecord.forkedFrom`) and `retries_json` (`RunRecord.retries`), and the indexes
 * `runs_parent_created` (parent_run_id, created_at, id) for `runs.list({ parentRunId })` and
 * `runs_status_updated` (status, updated_at, id) for retention. Existing runs keep NULL, read back
 * as absent. Down drops them.
 */
export function operationsMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, detectDialect(db)),
    down: (db) => down(db, names, detectDialect(db)),
  };
}
