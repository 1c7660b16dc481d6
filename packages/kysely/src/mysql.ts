// Entry point `@cairn/kysely/mysql`: what needs the `mysql2` driver's types, kept out of the main
// entry so a project on SQLite or PostgreSQL type-checks without `mysql2` installed.
import { Kysely, MysqlDialect } from 'kysely';
import type { WorkflowStore } from '@cairn/core';
import type { AnySchema } from './dialect/types.js';
import type { Pool as MysqlPool, PoolOptions } from 'mysql2';
import { markGuarded, type ConnectionErrorHandler } from './connection-guards.js';
import { openOwned, type ServerStoreOptions } from './server-stores.js';

/**
 * Makes a `mysql2` pool (the callback pool Kysely's `MysqlDialect` takes) safe across a server
 * restart: a pooled connection listens for its own `'error'` only once (to leave the pool), so a
 * second error on it, with no listener of yours, would end the process. This adds a permanent
 * `'error'` listener to every connection as the pool creates it, and to the pool. Idempotent;
 * returns the pool.
 */
export function guardMysqlPool<P extends MysqlPool>(pool: P, onError: ConnectionErrorHandler = () => {}): P {
  if (!markGuarded(pool)) return pool;
  pool.on('error' as 'connection', (error: unknown) => onError(error));
  pool.on('connection', (connection) => {
    connection.on('error', (error) => onError(error));
  });
  return pool;
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
  return openOwned(new Kysely<AnySchema>({ dialect: new MysqlDialect({ pool }) }), 'mysql', options);
}

export type { ConnectionErrorHandler } from './connection-guards.js';
export type { ServerStoreOptions } from './server-stores.js';
