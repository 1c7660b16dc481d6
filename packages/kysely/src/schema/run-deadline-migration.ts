import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import type { TableNames } from './tables.js';

/** The columns `cairn_0004_run_deadline` adds to `runs`: `RunRecord.deadline` and `cancelReason`. */
export const DEADLINE_COLUMN = 'deadline';
export const CANCEL_REASON_COLUMN = 'cancel_reason';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  await dialect.schema.addColumnOnce(db, names.runs, DEADLINE_COLUMN, dialect.schema.columnType('bigint'));
  await dialect.schema.addColumnOnce(db, names.runs, CANCEL_REASON_COLUMN, dialect.schema.columnType('text'));
  await dialect.routines.replaceRequestCancel(db, names, '0004');
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  // The procedure of 0004 names cancel_reason, so it goes first.
  await dialect.routines.replaceRequestCancel(db, names, '0002');
  for (const column of [CANCEL_REASON_COLUMN, DEADLINE_COLUMN]) await dialect.schema.dropColumnOnce(db, names.runs, column);
}

/**
 * `cairn_0004_run_deadline`: the nullable columns `runs.deadline` (BIGINT epoch ms,
 * `RunRecord.deadline`) and `runs.cancel_reason` (TEXT, `RunRecord.cancelReason`), and on
 * MySQL/MariaDB the `run_request_cancel` procedure replaced by one taking `p_reason`. Existing runs
 * keep NULL in both, read back as absent. Down restores the procedure of 0002 and drops the columns.
 */
export function runDeadlineMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
