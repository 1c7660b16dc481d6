import type { Pool as PgPool } from 'pg';
import { markGuarded, type ConnectionErrorHandler } from '../connection-guards.js';

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
