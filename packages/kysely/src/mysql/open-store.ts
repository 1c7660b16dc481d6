import { Kysely, MysqlDialect } from 'kysely';
import type { WorkflowStore } from '@cairn/core/backend';
import type { PoolOptions } from 'mysql2';
import type { AnySchema } from '../dialect/types.js';
import { openOwned, type ServerStoreOptions } from '../server-stores.js';
import { guardMysqlPool } from './pool-guard.js';

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
