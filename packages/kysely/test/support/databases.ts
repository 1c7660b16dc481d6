import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, type LogEvent } from 'kysely';
import { createMysqlDatabase, createPostgresDatabase, dropMysqlDatabase, dropPostgresDatabase } from '@cairn/conformance/services';
import type { SqlDialectName } from '../../src/index.js';

// biome-ignore lint/suspicious/noExplicitAny: the tests query the store's tables, whose database interface Kysely is never given
export type AnyDb = Kysely<any>;

/** Options of a test Kysely instance. */
export interface DbOptions {
  log?: (event: LogEvent) => void;
  poolSize?: number;
}

/** A Kysely instance on a PostgreSQL URL (its own pool). */
export async function postgresDb(url: string, options: DbOptions = {}): Promise<AnyDb> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
  // An idle connection closed by the server (a dropped test database) must not crash the process.
  pool.on('error', () => {});
  return new Kysely({ dialect: new PostgresDialect({ pool }), ...(options.log ? { log: options.log } : {}) });
}

/** A Kysely instance on a MySQL URL (its own pool). */
export async function mysqlDb(url: string, options: DbOptions = {}): Promise<AnyDb> {
  const mysql = await import('mysql2');
  const pool = mysql.createPool({ uri: url, connectionLimit: options.poolSize ?? 10 });
  return new Kysely({ dialect: new MysqlDialect({ pool }), ...(options.log ? { log: options.log } : {}) });
}

/** A Kysely instance on a SQLite file (WAL, busy timeout). */
export async function sqliteDb(filename: string, options: DbOptions = {}): Promise<AnyDb> {
  const { default: Database } = await import('better-sqlite3');
  const database = new Database(filename);
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = NORMAL');
  return new Kysely({ dialect: new SqliteDialect({ database }), ...(options.log ? { log: options.log } : {}) });
}

/** A fresh database on the server (dropped by `dropDatabase`), so test files never share tables. */
export async function createDatabase(dialect: Exclude<SqlDialectName, 'sqlite'>, serverUrl: string, name: string): Promise<string> {
  return dialect === 'postgres' ? createPostgresDatabase(serverUrl, name) : createMysqlDatabase(serverUrl, name);
}

/** Drops a database made by `createDatabase`. */
export async function dropDatabase(dialect: Exclude<SqlDialectName, 'sqlite'>, dbUrl: string): Promise<void> {
  await (dialect === 'postgres' ? dropPostgresDatabase(dbUrl) : dropMysqlDatabase(dbUrl));
}
