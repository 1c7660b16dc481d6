import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect } from '../dialect/detect.js';
import type { AnyKysely, SqlDialectName } from '../dialect/types.js';
import { mysqlCollation } from '../mysql/collation.js';
import { mysqlRequestCancelRoutine } from '../routines/mysql-run-routines.js';
import { routineNames, type RequestCancelVersion } from '../routines/params.js';
import { columnType } from './column-types.js';
import { mysqlHasColumn } from './mysql-has-column.js';
import type { TableNames } from './tables.js';

/** The columns `cairn_0004_run_deadline` adds to `runs`: `RunRecord.deadline` and `cancelReason`. */
export const DEADLINE_COLUMN = 'deadline';
export const CANCEL_REASON_COLUMN = 'cancel_reason';

/** MySQL/MariaDB: replaces `run_request_cancel` by the procedure of `version`. */
async function replaceRequestCancel(db: AnyKysely, names: TableNames, version: RequestCancelVersion): Promise<void> {
  await sql.raw(`drop procedure if exists \`${routineNames(names.prefix).runRequestCancel}\``).execute(db);
  await sql.raw(mysqlRequestCancelRoutine(names, await mysqlCollation(db), version)).execute(db);
}

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  // PostgreSQL runs a migration in one transaction; MySQL/MariaDB commit each DDL statement, so a
  // try that failed after an ALTER must be able to run again.
  if (dialect !== 'mysql' || !(await mysqlHasColumn(db, names.runs, DEADLINE_COLUMN))) {
    await db.schema.alterTable(names.runs).addColumn(DEADLINE_COLUMN, columnType(dialect, 'bigint')).execute();
  }
  if (dialect !== 'mysql' || !(await mysqlHasColumn(db, names.runs, CANCEL_REASON_COLUMN))) {
    await db.schema.alterTable(names.runs).addColumn(CANCEL_REASON_COLUMN, columnType(dialect, 'text')).execute();
  }
  if (dialect === 'mysql') await replaceRequestCancel(db, names, '0004');
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  // The procedure of 0004 names cancel_reason, so it goes first.
  if (dialect === 'mysql') await replaceRequestCancel(db, names, '0002');
  for (const column of [CANCEL_REASON_COLUMN, DEADLINE_COLUMN]) {
    if (dialect !== 'mysql' || (await mysqlHasColumn(db, names.runs, column))) {
      await db.schema.alterTable(names.runs).dropColumn(column).execute();
    }
  }
}

/**
 * `cairn_0004_run_deadline`: the nullable columns `runs.deadline` (BIGINT epoch ms,
 * `RunRecord.deadline`) and `runs.cancel_reason` (TEXT, `RunRecord.cancelReason`), and on
 * MySQL/MariaDB the `run_request_cancel` procedure replaced by one taking `p_reason`. Existing runs
 * keep NULL in both, read back as absent. Down restores the procedure of 0002 and drops the columns.
 */
export function runDeadlineMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, detectDialect(db)),
    down: (db) => down(db, names, detectDialect(db)),
  };
}
