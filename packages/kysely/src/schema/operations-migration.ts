import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import type { ColumnKind } from './column-types.js';
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

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  for (const [column, kind] of OPERATIONS_COLUMNS) await dialect.schema.addColumnOnce(db, names.runs, column, dialect.schema.columnType(kind));
  for (const index of OPERATIONS_INDEXES) await dialect.schema.createIndexOnce(db, names.runs, `${names.prefix}${index.name}`, index.columns);
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  for (const index of OPERATIONS_INDEXES) await dialect.schema.dropIndexOnce(db, names.runs, `${names.prefix}${index.name}`);
  for (const [column] of [...OPERATIONS_COLUMNS].reverse()) await dialect.schema.dropColumnOnce(db, names.runs, column);
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
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
