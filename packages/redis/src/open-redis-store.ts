import { Redis, type RedisOptions } from 'ioredis';
import { CairnError } from '@cairn/core';
import { createRedisStore, type RedisStoreOptions, type RedisWorkflowStore } from './create-redis-store.js';

/** Options of `openRedisStore`: those of `createRedisStore` without the client, plus the guard's handler. */
export interface OpenRedisStoreOptions extends Omit<RedisStoreOptions, 'redis'> {
  /**
   * Receives the client's connection errors (a restart, a dropped connection), which the store
   * keeps from reaching ioredis' "Unhandled error event" output. Default: ignored — the store calls
   * that fail reject with `STORE_ERROR`, and the engine logs an outage once.
   */
  onConnectionError?: (error: unknown) => void;
}

/**
 * Opens a Redis store that owns its ioredis client: connection errors go to `onConnectionError`
 * (never to ioredis' console output), the client reconnects for ever (every 100 ms growing to 2 s),
 * and a command waits through at most 3 reconnections before it fails with `STORE_ERROR` (ioredis'
 * default is 20). `connection` is a URL (`redis://host:6379`) or ioredis `RedisOptions`; a
 * `keyPrefix` in them is refused (use `prefix`). `close()` quits the client. Redis must persist its
 * data (AOF, or RDB saved on shutdown) for runs to survive a restart of the server.
 */
export function openRedisStore(connection: string | RedisOptions, options: OpenRedisStoreOptions = {}): RedisWorkflowStore {
  if (typeof connection !== 'string' && (connection === null || typeof connection !== 'object')) {
    throw new CairnError('INVALID_INPUT', 'openRedisStore needs a Redis URL or ioredis options');
  }
  const settings: RedisOptions = {
    maxRetriesPerRequest: 3,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    ...(typeof connection === 'string' ? {} : connection),
  };
  const client = typeof connection === 'string' ? new Redis(connection, settings) : new Redis(settings);
  const onError = options.onConnectionError ?? (() => {});
  client.on('error', (error) => onError(error));
  const { onConnectionError: _ignored, ...storeOptions } = options;
  let store: RedisWorkflowStore;
  try {
    store = createRedisStore({ ...storeOptions, redis: client });
  } catch (error) {
    client.disconnect();
    throw error;
  }
  let closed = false;
  return {
    ...store,
    async close() {
      if (closed) return;
      closed = true;
      await store.close();
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}
