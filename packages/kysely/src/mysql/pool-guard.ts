import type { Pool as MysqlPool } from 'mysql2';
import { markGuarded, type ConnectionErrorHandler } from '../connection-guards.js';

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
