import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect } from '../dialect/detect.js';
import type { AnyKysely, SqlDialectName } from '../dialect/types.js';
import { replaceStepRoutines } from '../routines/install-routines.js';
import { dropSqliteFinishedTrigger, sqliteFinishedTrigger } from '../routines/sqlite-triggers.js';
import { columnType } from './column-types.js';
import { mysqlHasColumn } from './mysql-has-column.js';
import type { TableNames } from './tables.js';
import { FENCE_COLUMN } from './added-columns.js';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  // PostgreSQL runs a migration in one transaction and SQLite's DDL is transactional; MySQL/MariaDB
  // commit each DDL statement, so a try that failed after the ALTER must be able to run again.
  if (dialect !== 'mysql' || !(await mysqlHasColumn(db, names.steps, FENCE_COLUMN))) {
    await db.schema.alterTable(names.steps).addColumn(FENCE_COLUMN, columnType(dialect, 'bigint')).execute();
  }
  if (dialect === 'sqlite') {
    for (const statement of sqliteFinishedTrigger(names)) await sql.raw(statement).execute(db);
  } else {
    await replaceStepRoutines(db, names, dialect, '0003', '0008');
  }
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  // The routines of 0008 name the column, so they go first.
  if (dialect === 'sqlite') {
    for (const statement of dropSqliteFinishedTrigger(names)) await sql.raw(statement).execute(db);
  } else {
    await replaceStepRoutines(db, names, dialect, '0008', '0003');
  }
  if (dialect !== 'mysql' || (await mysqlHasColumn(db, names.steps, FENCE_COLUMN))) {
    await db.schema.alterTable(names.steps).dropColumn(FENCE_COLUMN).execute();
  }
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
    up: (db) => up(db, names, detectDialect(db)),
    down: (db) => down(db, names, detectDialect(db)),
  };
}
