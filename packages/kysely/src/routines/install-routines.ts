import { sql } from 'kysely';
import type { AnyKysely, SqlDialectName } from '../dialect/types.js';
import type { TableNames } from '../schema/tables.js';
import { dropMysqlRoutines, dropMysqlStepRoutines, mysqlRoutines, mysqlStepRoutines } from './mysql-routines.js';
import type { StepRoutineVersion } from './params.js';
import { dropPostgresRoutines, postgresRoutines } from './postgres-routines.js';
import { dropFinishedTriggerOnly, dropSqliteTriggers, sqliteTriggers } from './sqlite-triggers.js';

/**
 * The collation of the store's text columns on MySQL/MariaDB: binary and NO PAD, so 'a' and 'a '
 * stay different keys and comparisons are byte order.
 */
export async function mysqlCollation(db: AnyKysely): Promise<string> {
  const { rows } = await sql<{ v: string }>`select version() as v`.execute(db);
  return String(rows[0]?.v ?? '').toLowerCase().includes('mariadb') ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin';
}

async function execute(db: AnyKysely, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/**
 * What `cairn_0002_step_routines` creates, exactly as it always did: the step-write routines as
 * they were then (no `turn`), MySQL's run and state procedures, or SQLite's triggers.
 */
export async function installRoutines(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  const version: StepRoutineVersion = '0002';
  await execute(db, dialect === 'postgres' ? postgresRoutines(names, version) : dialect === 'mysql' ? mysqlRoutines(names, await mysqlCollation(db), version) : sqliteTriggers(names));
}

/** Drops every routine (and SQLite's triggers) of every version: the down of `cairn_0002_step_routines`. */
export async function dropRoutines(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  const statements =
    dialect === 'postgres'
      ? [...dropPostgresRoutines(names, '0008'), ...dropPostgresRoutines(names, '0003'), ...dropPostgresRoutines(names, '0002')]
      : dialect === 'mysql'
        ? dropMysqlRoutines(names)
        : [dropFinishedTriggerOnly(names), ...dropSqliteTriggers(names)];
  await execute(db, statements);
}

/**
 * Replaces the two step-write routines of version `from` with those of version `to` (PostgreSQL
 * functions, MySQL/MariaDB procedures; SQLite has none: its step statements live in the store).
 * The old ones are dropped, not left as overloads, so a database holds one version of each.
 */
export async function replaceStepRoutines(db: AnyKysely, names: TableNames, dialect: SqlDialectName, from: StepRoutineVersion, to: StepRoutineVersion): Promise<void> {
  if (dialect === 'postgres') await execute(db, [...dropPostgresRoutines(names, from), ...postgresRoutines(names, to)]);
  else if (dialect === 'mysql') await execute(db, [...dropMysqlStepRoutines(names), ...mysqlStepRoutines(names, await mysqlCollation(db), to)]);
}
