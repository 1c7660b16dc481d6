import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import type { TableNames } from './tables.js';

/** The column `cairn_0007_run_trace_context` adds to `runs`: `RunRecord.traceContext` as JSON text. */
export const TRACE_CONTEXT_COLUMN = 'trace_context_json';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  await dialect.schema.addColumnOnce(db, names.runs, TRACE_CONTEXT_COLUMN, dialect.schema.columnType('json'));
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  await dialect.schema.dropColumnOnce(db, names.runs, TRACE_CONTEXT_COLUMN);
}

/**
 * `cairn_0007_run_trace_context`: the nullable column `runs.trace_context_json` (JSON text,
 * `RunRecord.traceContext`: the W3C carrier of the code that started the run). Existing runs keep
 * NULL, read back as absent. Down drops the column.
 */
export function runTraceContextMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
