import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import { runStatements } from './run-statements.js';
import type { TableNames } from './tables.js';
import { FENCE_COLUMN } from './added-columns.js';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  await dialect.schema.addColumnOnce(db, names.steps, FENCE_COLUMN, dialect.schema.columnType('bigint'));
  await runStatements(db, await dialect.routines.installFinishedStep(db, names));
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  // The routines of 0008 name the column, so they go first.
  await runStatements(db, await dialect.routines.removeFinishedStep(db, names));
  await dialect.schema.dropColumnOnce(db, names.steps, FENCE_COLUMN);
}

/**
 * `cairn_0008_step_finished`: an inline step in one write. The nullable BIGINT column `steps.fence`
 * (the claim that recorded the step, `StepRecord.fence`), and a step insert that can record the
 * step already finished with its attempt 1 in the same write: the PL/pgSQL function and the
 * MySQL/MariaDB procedure `step_insert` replaced by ones that take the finished attempt and stamp
 * the fence (the transition routine is re-created unchanged); on SQLite a trigger that writes the
 * finished attempt from the inserted row (and one more trigger-input column, `start_at`). Existing
 * steps keep NULL, read back as an absent `fence`. Down restores the routines of 0003 and drops
 * the column.
 */
export function stepFinishedMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
