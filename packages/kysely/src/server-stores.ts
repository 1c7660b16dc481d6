import { Kysely, MysqlDialect, PostgresDialect } from 'kysely';
import type { WorkflowStore } from '@cairn/core';
import type { PoolConfig } from 'pg';
import type { PoolOptions } from 'mysql2';
import { guardMysqlPool, guardPostgresPool, type ConnectionErrorHandler } from './connection-guards.js';
import { migrateToLatest } from './schema/migrations.js';
import { createKyselyStore } from './store.js';
import type { AnyKysely, SqlDialectName } from './dialect/types.js';

/** Options of `openPostgresStore` and `openMysqlStore`. */
export interface ServerStoreOptions {
  /** Prefix of every table name (default `cairn_`). */
  tablePrefix?: string;
  /**
   * Run the migrations on open (default true). Opening then needs the server to be up; pass
   * `false` (and migrate at deploy time) to open a store while the database may be unreachable.
   */
  migrate?: boolean;
  /** PostgreSQL only: see `KyselyStoreOptions.asyncStartCommit` (default true). */
  asyncStartCommit?: boolean;
  /** Largest JSON payload in bytes the store advertises (see `KyselyStoreOptions`). */
  maxPayloadBytes?: number;
  /**
   * Receives the connection errors the pool's guards caught (a restart, a dropped connection).
   * Default: ignored — the store operation that failed rejects with `STORE_ERROR` anyway, and the
   * engine logs an outage once.
   */
  onConnectionError?: ConnectionErrorHandler;
}

// A server that does not answer must not hang a store call for ever (pg's default is no limit).
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens a PostgreSQL store that owns its `pg` Pool: every connection is guarded
 * (`guardPostgresPool`), so a server restart or a dropped connection fails the store calls in
 * flight with `STORE_ERROR` instead of crashing the process, and the pool reconnects when the
 * server is back. `connection` is a connection string or a `pg` `PoolConfig`
 * (`connectionTimeoutMillis` defaults to 10 s). Tables are migrated on open unless
 * `migrate: false`. `close()` ends the pool.
 */
export async function openPostgresStore(connection: string | PoolConfig, options: ServerStoreOptions = {}): Promise<WorkflowStore> {
  const { default: pg } = await import('pg');
  const config: PoolConfig = typeof connection === 'string' ? { connectionString: connection } : { ...connection };
  config.connectionTimeoutMillis ??= CONNECT_TIMEOUT_MS;
  const pool = guardPostgresPool(new pg.Pool(config), options.onConnectionError);
  return openOwned(new Kysely<any>({ dialect: new PostgresDialect({ pool }) }), 'postgres', options); // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Opens a MySQL/MariaDB store that owns its `mysql2` pool, every connection guarded
 * (`guardMysqlPool`): a server restart fails the calls in flight with `STORE_ERROR` instead of
 * crashing the process, and the pool reconnects when the server is back. `connection` is a URL
 * (`mysql://user:pw@host:3306/db`) or `mysql2` `PoolOptions`. Tables are migrated on open unless
 * `migrate: false`. `close()` ends the pool.
 */
export async function openMysqlStore(connection: string | PoolOptions, options: ServerStoreOptions = {}): Promise<WorkflowStore> {
  const { createPool } = await import('mysql2');
  const config: PoolOptions = typeof connection === 'string' ? { uri: connection } : { ...connection };
  const pool = guardMysqlPool(createPool(config), options.onConnectionError);
  return openOwned(new Kysely<any>({ dialect: new MysqlDialect({ pool }) }), 'mysql', options); // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function openOwned(db: AnyKysely, dialect: SqlDialectName, options: ServerStoreOptions): Promise<WorkflowStore> {
  const tablePrefix = options.tablePrefix ?? 'cairn_';
  try {
    if (options.migrate ?? true) await migrateToLatest(db, { tablePrefix });
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw error;
  }
  return createKyselyStore({
    db,
    dialect,
    tablePrefix,
    ownsDb: true,
    ...(options.asyncStartCommit === undefined ? {} : { asyncStartCommit: options.asyncStartCommit }),
    ...(options.maxPayloadBytes === undefined ? {} : { maxPayloadBytes: options.maxPayloadBytes }),
  });
}
