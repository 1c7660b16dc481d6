import { after } from 'node:test';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisStore, type RedisStoreOptions, type RedisWorkflowStore } from '@cairn/redis';
import { provideRedis } from './redis-server.js';

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

/** Every key under `prefix` (test-only SCAN: the store itself never scans). */
export async function keysOf(client: Redis, prefix: string): Promise<string[]> {
  const found = new Set<string>();
  for (const pattern of [`${prefix}:*`, `{${prefix}}*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) found.add(key);
    } while (cursor !== '0');
  }
  return [...found].sort();
}

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
export async function withStore(
  options: Omit<RedisStoreOptions, 'redis'>,
  fn: (env: StoreEnv) => Promise<void>,
): Promise<void> {
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
