import { after } from 'node:test';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisStore, type RedisStoreOptions, type RedisWorkflowStore } from '@cairn/redis';
import { keysOf } from './keys.js';
import { provideRedis } from './redis-server.js';

export { keysOf };

/** The Redis of this test file (one per process), stopped after its last test. */
export const testRedis = await provideRedis();
after(async () => {
  if ('stop' in testRedis) await testRedis.stop();
});

/** `{ skip }` for `describe` when there is no Redis. */
export const skip = 'skip' in testRedis ? testRedis.skip : false;

export const redisUrl = (): string => {
  if ('skip' in testRedis) throw new Error(testRedis.skip);
  return testRedis.url;
};

/** A fresh prefix, unique per test. */
export const newPrefix = (): string => `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

/** A new client on the test Redis (the caller quits it). */
export const newClient = (): Redis => new Redis(redisUrl(), { maxRetriesPerRequest: 1 });

export interface StoreEnv {
  client: Redis;
  store: RedisWorkflowStore;
  prefix: string;
  /** A second store (own connection) on the same prefix, as another process would have. */
  peer(): RedisWorkflowStore;
}

/** The two index modes every contract test runs in. */
export const MODES = [
  { title: 'single-server mode', cluster: false },
  { title: 'cluster mode', cluster: true },
] as const;

/** Runs `fn` with a store on a fresh prefix; removes the prefix's keys and quits the clients after. */
export async function withStore(options: Omit<RedisStoreOptions, 'redis'>, fn: (env: StoreEnv) => Promise<void>): Promise<void> {
  const client = newClient();
  const prefix = options.prefix ?? newPrefix();
  const extra: Redis[] = [];
  const env: StoreEnv = {
    client,
    prefix,
    store: createRedisStore({ ...options, redis: client, prefix }),
    peer() {
      const other = newClient();
      extra.push(other);
      return createRedisStore({ ...options, redis: other, prefix });
    },
  };
  try {
    await fn(env);
  } finally {
    const keys = await keysOf(client, prefix);
    for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
    await Promise.all([client, ...extra].map((c) => c.quit()));
  }
}
