import { Kysely, PostgresDialect } from 'kysely';
import type { WorkflowStore } from '@cairn/core/backend';
import type { PoolConfig } from 'pg';
import type { AnySchema } from '../dialect/types.js';
import { openOwned, type ServerStoreOptions } from '../server-stores.js';
import { guardPostgresPool } from './pool-guard.js';
import { createPostgresSignals } from './postgres-signals.js';

// A server that does not answer must not hang a store call for ever (pg's default is no limit).
const CONNECT_TIMEOUT_MS = 10_000;

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
