// Entry point `@cairn/kysely/postgres`: what needs the `pg` driver's types, kept out of the main
// entry so a project on SQLite or MySQL type-checks without `pg` installed.
import { Kysely, PostgresDialect } from 'kysely';
import type { WorkflowStore } from '@cairn/core';
import type { AnySchema } from './dialect/types.js';
import type { Pool as PgPool, PoolConfig } from 'pg';
import { markGuarded, type ConnectionErrorHandler } from './connection-guards.js';
import { openOwned, type ServerStoreOptions } from './server-stores.js';
import { createPostgresSignals } from './postgres/postgres-signals.js';

// A server that does not answer must not hang a store call for ever (pg's default is no limit).
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Makes a `pg` Pool safe across a server restart or a dropped connection. A `pg` client emits
 * `'error'` when its connection ends unexpectedly (`57P01` on a fast shutdown, `Connection
 * terminated unexpectedly`), whether or not a query is running; pg-pool listens only while the
 * client is idle in the pool and re-emits on the pool, so an error on a checked-out client — or on
 * a pool with no `'error'` listener — is an uncaught exception that ends the process. This adds a
 * permanent `'error'` listener to the pool and to every client as it connects. The failed query
 * still rejects (the store turns it into `STORE_ERROR`) and pg-pool discards the broken client.
 * Idempotent; returns the pool.
 */
export function guardPostgresPool<P extends PgPool>(pool: P, onError: ConnectionErrorHandler = () => {}): P {
  if (!markGuarded(pool)) return pool;
  pool.on('error', (error) => onError(error));
  pool.on('connect', (client) => {
    client.on('error', (error) => onError(error));
  });
  return pool;
}

/**
 * Opens a PostgreSQL store that owns its `pg` Pool: every connection is guarded
 * (`guardPostgresPool`), so a server restart or a dropped connection fails the store calls in
 * flight with `STORE_ERROR` instead of crashing the process, and the pool reconnects when the
 * server is back. `connection` is a connection string or a `pg` `PoolConfig`
 * (`connectionTimeoutMillis` defaults to 10 s). Tables are migrated on open unless
 * `migrate: false`. Routine calls go as named (prepared) statements unless `preparedStatements:
 * false` (see `KyselyStoreOptions.preparedStatements`; a connection that does not keep them makes
 * the store fall back to unnamed ones by itself). The store has `signals` (LISTEN/NOTIFY, `createPostgresSignals`): a dedicated
 * listening connection is opened when an engine with workers starts. `close()` ends the pool and it.
 */
export async function openPostgresStore(connection: string | PoolConfig, options: ServerStoreOptions = {}): Promise<WorkflowStore> {
  const { default: pg } = await import('pg');
  const config: PoolConfig = typeof connection === 'string' ? { connectionString: connection } : { ...connection };
  config.connectionTimeoutMillis ??= CONNECT_TIMEOUT_MS;
  const pool = guardPostgresPool(new pg.Pool(config), options.onConnectionError);
  const db = new Kysely<AnySchema>({ dialect: new PostgresDialect({ pool }) });
  // LISTEN/NOTIFY wake-ups: workers in other processes pick up runs started here at once.
  const signals = createPostgresSignals({ db, connection: config, tablePrefix: options.tablePrefix ?? 'cairn_' });
  // Named statements by default here, where the driver is known to be `pg` (decision 48).
  return openOwned(db, 'postgres', { ...options, preparedStatements: options.preparedStatements ?? true }, signals);
}

export { createPostgresSignals } from './postgres/postgres-signals.js';
export type { PostgresSignals, PostgresSignalsOptions } from './postgres/postgres-signals.js';
export type { ConnectionErrorHandler } from './connection-guards.js';
export type { ServerStoreOptions } from './server-stores.js';
