import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect } from '../dialect/detect.js';
import type { AnyKysely, SqlDialectName } from '../dialect/types.js';
import { replaceStepRoutines } from '../routines/install-routines.js';
import { columnType } from './column-types.js';
import { mysqlHasColumn } from './mysql-has-column.js';
import type { TableNames } from './tables.js';
import { TURN_COLUMN } from './added-columns.js';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  // PostgreSQL runs a migration in one transaction and SQLite's is this one statement; MySQL/MariaDB
  // commit each DDL statement, so a try that failed after the ALTER must be able to run again.
  if (dialect !== 'mysql' || !(await mysqlHasColumn(db, names.steps, TURN_COLUMN))) {
    await db.schema.alterTable(names.steps).addColumn(TURN_COLUMN, columnType(dialect, 'bigint')).execute();
  }
  await replaceStepRoutines(db, names, dialect, '0002', '0003');
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  // The routines of 0003 name the column, so they go first; those of 0002 never name it (neither
  // engine checks a routine's columns before it runs).
  await replaceStepRoutines(db, names, dialect, '0003', '0002');
  if (dialect !== 'mysql' || (await mysqlHasColumn(db, names.steps, TURN_COLUMN))) {
    await db.schema.alterTable(names.steps).dropColumn(TURN_COLUMN).execute();
  }
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
    up: (db) => up(db, names, detectDialect(db)),
    down: (db) => down(db, names, detectDialect(db)),
  };
}
