import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import { runStatements } from './run-statements.js';
import type { TableNames } from './tables.js';
import { TURN_COLUMN } from './added-columns.js';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  await dialect.schema.addColumnOnce(db, names.steps, TURN_COLUMN, dialect.schema.columnType('bigint'));
  await runStatements(db, await dialect.routines.replaceStep(db, names, '0002', '0003'));
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  // The routines of 0003 name the column, so they go first; those of 0002 never name it (neither
  // engine checks a routine's columns before it runs).
  await runStatements(db, await dialect.routines.replaceStep(db, names, '0003', '0002'));
  await dialect.schema.dropColumnOnce(db, names.steps, TURN_COLUMN);
}

/**
 * `cairn_0003_step_turn`: the nullable BIGINT column `steps.turn` (a step's delivery turn), and
 * the step-write routines of `cairn_0002_step_routines` replaced by ones that store it (PL/pgSQL
 * functions with one more argument, `p_turn`; MySQL/MariaDB procedures likewise). Existing steps
 * keep NULL, read back as an absent `turn`. SQLite only gains the column: its step statements are
 * the store's own. Down drops the column and restores the routines of 0002.
 */
export function stepTurnMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
