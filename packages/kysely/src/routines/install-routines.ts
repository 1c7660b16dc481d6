import { sql } from 'kysely';
import type { AnyKysely, SqlDialectName } from '../dialect/types.js';
import type { TableNames } from '../schema/tables.js';
import { dropMysqlRoutines, mysqlRoutines } from './mysql-routines.js';
import { dropPostgresRoutines, postgresRoutines } from './postgres-routines.js';
import { dropSqliteTriggers, sqliteTriggers } from './sqlite-triggers.js';

/**
 * The collation of the store's text columns on MySQL/MariaDB: binary and NO PAD, so 'a' and 'a '
 * stay different keys and comparisons are byte order.
 */
export async function mysqlCollation(db: AnyKysely): Promise<string> {
  const { rows } = await sql<{ v: string }>`select version() as v`.execute(db);
  return String(rows[0]?.v ?? '').toLowerCase().includes('mariadb') ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin';
}

/** Creates the step-write routines: functions, procedures, or SQLite's triggers. */
export async function installRoutines(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  const statements =
    dialect === 'postgres' ? postgresRoutines(names) : dialect === 'mysql' ? mysqlRoutines(names, await mysqlCollation(db)) : sqliteTriggers(names);
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/** Drops the step-write routines. */
export async function dropRoutines(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  const statements = dialect === 'postgres' ? dropPostgresRoutines(names) : dialect === 'mysql' ? dropMysqlRoutines(names) : dropSqliteTriggers(names);
  for (const statement of statements) await sql.raw(statement).execute(db);
}
