import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import { PROMISED_COLUMN, PROMISES_COLUMN } from './added-columns.js';
import type { TableNames } from './tables.js';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  await dialect.schema.addColumnOnce(db, names.runs, PROMISED_COLUMN, dialect.schema.columnType('bigint'));
  await dialect.schema.addColumnOnce(db, names.runs, PROMISES_COLUMN, dialect.schema.columnType('int'));
  await dialect.routines.replaceRunClaim(db, names, '0018');
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  // The claim procedure of 0018 names promised_at, so it goes first.
  await dialect.routines.replaceRunClaim(db, names, '0015');
  await dialect.schema.dropColumnOnce(db, names.runs, PROMISES_COLUMN);
  await dialect.schema.dropColumnOnce(db, names.runs, PROMISED_COLUMN);
}

/**
 * `cairn_0018_run_wake_promise`: the nullable columns `runs.promised_at` (epoch ms: the earliest
 * outstanding promise of `runs.promiseWake`) and `runs.promises` (how many are outstanding);
 * existing runs keep NULL, no promise. On MySQL/MariaDB the `run_claim` procedure is replaced by
 * one that keeps a `wake_at` later than the claim on a run that is not pending, lowers it to a
 * promise later than the claim, and forgets a promise whose time came (PostgreSQL and SQLite
 * claim with a statement of the store that does the same; decision 78). Down restores the
 * procedure of 0015 and drops the columns.
 */
export function runWakePromiseMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
