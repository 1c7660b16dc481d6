import type { Pool as PgPool } from 'pg';
import type { Pool as MysqlPool } from 'mysql2';

/** Receives a connection error the guard kept from crashing the process. */
export type ConnectionErrorHandler = (error: unknown) => void;

// Marks a pool already guarded, so guarding twice adds no second set of listeners.
const GUARDED = Symbol.for('cairn.kysely.guarded');

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
  const marked = pool as P & { [GUARDED]?: boolean };
  if (marked[GUARDED]) return pool;
  marked[GUARDED] = true;
  pool.on('error', (error) => onError(error));
  pool.on('connect', (client) => {
    client.on('error', (error) => onError(error));
  });
  return pool;
}

/**
 * Makes a `mysql2` pool (the callback pool Kysely's `MysqlDialect` takes) safe across a server
 * restart: a pooled connection listens for its own `'error'` only once (to leave the pool), so a
 * second error on it, with no listener of yours, would end the process. This adds a permanent
 * `'error'` listener to every connection as the pool creates it, and to the pool. Idempotent;
 * returns the pool.
 */
export function guardMysqlPool<P extends MysqlPool>(pool: P, onError: ConnectionErrorHandler = () => {}): P {
  const marked = pool as P & { [GUARDED]?: boolean };
  if (marked[GUARDED]) return pool;
  marked[GUARDED] = true;
  pool.on('error' as 'connection', (error: unknown) => onError(error));
  pool.on('connection', (connection) => {
    connection.on('error', (error) => onError(error));
  });
  return pool;
}
