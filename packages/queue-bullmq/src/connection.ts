import { CairnError } from '@cairn/core';
import type { ConnectionOptions } from 'bullmq';
import { Redis, type Cluster, type RedisOptions } from 'ioredis';

/** What `createBullMQQueue` accepts as `connection`: a client you own, or options for one it creates. */
export type BullMQConnection = Redis | Cluster | RedisOptions;

/** The connections every BullMQ object the adapter creates is built from. */
export interface ResolvedConnection {
  /**
   * For `Queue` objects (sends). A client instance is shared by all of them and never closed by
   * BullMQ. Keeps the user's `maxRetriesPerRequest`, so a send fails rather than waits forever
   * while Redis is unreachable.
   */
  queue(): Redis | Cluster;
  /**
   * For `Worker` objects. BullMQ opens (and closes) a command and a blocking connection per worker
   * from it; blocking commands need `maxRetriesPerRequest: null`.
   */
  readonly worker: ConnectionOptions;
  /** Closes what the adapter opened itself; never a client the caller passed in. */
  close(): Promise<void>;
}

function isClient(connection: BullMQConnection): connection is Redis | Cluster {
  // Duck-typed rather than instanceof: the caller's ioredis may be another copy of the package.
  return typeof (connection as { duplicate?: unknown }).duplicate === 'function' && typeof (connection as { status?: unknown }).status === 'string';
}

/** Builds the adapter's connections from the caller's `connection`, checking what BullMQ refuses. */
export function resolveConnection(connection: BullMQConnection | undefined): ResolvedConnection {
  if (connection === undefined || connection === null || typeof connection !== 'object') {
    throw new CairnError('INVALID_INPUT', 'createBullMQQueue: `connection` (an ioredis client or its options) is required');
  }
  if (isClient(connection)) {
    const isCluster = (connection as { isCluster?: boolean }).isCluster === true;
    const options = (isCluster ? (connection as Cluster).options.redisOptions : (connection as Redis).options) ?? {};
    checkNoKeyPrefix(options);
    return {
      queue: () => connection,
      // The same settings as the caller's client (host, auth, TLS, db...), as `duplicate()` would
      // copy them, with the one override blocking commands need. A cluster client is passed as is,
      // and then must already have `maxRetriesPerRequest: null`.
      worker: (isCluster ? connection : { ...(options as RedisOptions), maxRetriesPerRequest: null }) as ConnectionOptions,
      close: async () => {},
    };
  }
  checkNoKeyPrefix(connection);
  let owned: Redis | undefined;
  return {
    queue: () => (owned ??= new Redis({ ...connection })),
    // bullmq declares its own, looser RedisOptions type; the values are ioredis options either way.
    worker: { ...connection, maxRetriesPerRequest: null } as ConnectionOptions,
    close: async () => {
      if (owned === undefined) return;
      const client = owned;
      owned = undefined;
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}

function checkNoKeyPrefix(options: { keyPrefix?: unknown }): void {
  // BullMQ's Lua scripts build key names themselves, so an ioredis keyPrefix would split a queue's
  // keys between two namespaces.
  if (options.keyPrefix) {
    throw new CairnError('INVALID_INPUT', 'createBullMQQueue: an ioredis keyPrefix breaks BullMQ; use the `prefix` option instead');
  }
}
