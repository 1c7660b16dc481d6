import { MysqlAdapter, PostgresAdapter, SqliteAdapter } from 'kysely';
import { CairnError } from '@cairn/core';
import { mysqlDialect } from '../mysql/dialect.js';
import { postgresDialect } from '../postgres/dialect.js';
import { sqliteDialect } from '../sqlite/dialect.js';
import type { AnyKysely, SqlDialect, SqlDialectName } from './types.js';

const DIALECTS: Record<SqlDialectName, SqlDialect> = { postgres: postgresDialect, mysql: mysqlDialect, sqlite: sqliteDialect };

/** The dialect object of a name. */
export function dialectOf(name: SqlDialectName): SqlDialect {
  const dialect = DIALECTS[name];
  if (!dialect) throw new CairnError('INVALID_INPUT', `Unknown SQL dialect ${JSON.stringify(name)} (postgres, mysql or sqlite)`);
  return dialect;
}

/**
 * Detects the dialect from the Kysely instance's adapter: Kysely's own Postgres, MySQL and SQLite
 * adapters, or adapters that extend them (by class, or by class name when two copies of Kysely are
 * installed). Throws `INVALID_INPUT` when it cannot tell; pass `dialect` then.
 */
export function detectDialect(db: AnyKysely): SqlDialectName {
  const adapter: unknown = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return 'postgres';
  if (adapter instanceof MysqlAdapter) return 'mysql';
  if (adapter instanceof SqliteAdapter) return 'sqlite';
  for (let proto = Object.getPrototypeOf(adapter); proto; proto = Object.getPrototypeOf(proto)) {
    const name = String((proto as { constructor?: { name?: string } }).constructor?.name ?? '').toLowerCase();
    if (name.includes('postgres')) return 'postgres';
    if (name.includes('mysql') || name.includes('maria')) return 'mysql';
    if (name.includes('sqlite')) return 'sqlite';
  }
  throw new CairnError('INVALID_INPUT', 'Cannot detect the SQL dialect of this Kysely instance; pass dialect: "postgres" | "mysql" | "sqlite"');
}
