import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect } from '../dialect/detect.js';
import type { AnyKysely, SqlDialectName } from '../dialect/types.js';
import { columnType } from './column-types.js';
import { mysqlHasColumn } from './mysql-has-column.js';
import type { TableNames } from './tables.js';

/** The column `cairn_0007_run_trace_context` adds to `runs`: `RunRecord.traceContext` as JSON text. */
export const TRACE_CONTEXT_COLUMN = 'trace_context_json';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  // MySQL/MariaDB commit each DDL statement: a try that failed after the ALTER must be able to run again.
  if (dialect === 'mysql' && (await mysqlHasColumn(db, names.runs, TRACE_CONTEXT_COLUMN))) return;
  await db.schema.alterTable(names.runs).addColumn(TRACE_CONTEXT_COLUMN, columnType(dialect, 'json')).execute();
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  if (dialect === 'mysql' && !(await mysqlHasColumn(db, names.runs, TRACE_CONTEXT_COLUMN))) return;
  await db.schema.alterTable(names.runs).dropColumn(TRACE_CONTEXT_COLUMN).execute();
}

/**
 * `cairn_0007_run_trace_context`: the nullable column `runs.trace_context_json` (JSON text,
 * `RunRecord.traceContext`: the W3C carrier of the code that started the run). Existing runs keep
 * NULL, read back as absent. Down drops the column.
 */
export function runTraceContextMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, detectDialect(db)),
    down: (db) => down(db, names, detectDialect(db)),
  };
}
