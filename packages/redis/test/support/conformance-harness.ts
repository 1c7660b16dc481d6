import type { WorkflowStore } from '@cairn/core/backend';
import { Redis } from 'ioredis';
import { createRedisStore, runTag, type RedisWorkflowStore } from '@cairn/redis';
import { keysOf } from './keys.js';

/**
 * The conformance harness of the Redis store (structurally a `ConformanceHarness` of
 * `@cairn/conformance`): namespace = a fresh key prefix per test, one client per store instance
 * (so the multi-process cases race over separate connections), keys removed after each test.
 */
export function redisHarness(options: { url: string; source: string; cluster: boolean }) {
  const clients = new WeakMap<WorkflowStore, Redis>();
  return {
    name: options.cluster ? 'redis (cluster mode)' : 'redis',
    source: options.source,
    async createStore(namespace: string): Promise<WorkflowStore> {
      const client = new Redis(options.url, { maxRetriesPerRequest: 1 });
      const store = createRedisStore({ redis: client, prefix: namespace, cluster: options.cluster });
      clients.set(store, client);
      const close = store.close.bind(store);
      // The store never quits a client it did not create; this harness created it, so it does.
      return Object.assign(store, {
        async close() {
          await close();
          await client.quit();
        },
      }) satisfies RedisWorkflowStore;
    },
    async destroyStore(store: WorkflowStore, namespace: string) {
      const client = clients.get(store);
      if (client) {
        const keys = await keysOf(client, namespace);
        for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
      }
      await store.close();
    },
    /** Ends every pub/sub connection on the server (the cases run one at a time, so only this case's listeners). */
    async dropSignalConnections(store: WorkflowStore): Promise<number> {
      const client = clients.get(store);
      if (!client) return 0;
      return Number(await client.call('CLIENT', 'KILL', 'TYPE', 'pubsub'));
    },
    /** Test-only SCAN: every key of the run, plus every global index or hash that still names it. */
    async artefactsOf(store: WorkflowStore, namespace: string, runId: string): Promise<string[]> {
      const client = clients.get(store);
      if (!client) return ['(no client for this store)'];
      const left: string[] = [];
      const runPrefix = `${namespace}:run:{${runTag(runId)}}`;
      for (const key of await keysOf(client, namespace)) {
        if (key.startsWith(runPrefix)) {
          left.push(`key ${key}`);
          continue;
        }
        const type = await client.type(key);
        if (type === 'zset' && (await client.zscore(key, runId)) !== null) left.push(`member of ${key}`);
        if (type === 'hash') {
          for (const [field, value] of Object.entries(await client.hgetall(key))) {
            if (field === runId || value === runId) left.push(`${key} field ${field}`);
          }
        }
      }
      return left;
    },
    /** Test-only SCAN: every key of the namespace with its value, read by its type. */
    async rawContents(store: WorkflowStore, namespace: string): Promise<string[]> {
      const client = clients.get(store);
      if (!client) return ['(no client for this store)'];
      const out: string[] = [];
      for (const key of await keysOf(client, namespace)) {
        const type = await client.type(key);
        let value: unknown;
        if (type === 'string') value = await client.get(key);
        else if (type === 'hash') value = await client.hgetall(key);
        else if (type === 'zset') value = await client.zrange(key, '0', '-1', 'WITHSCORES');
        else if (type === 'list') value = await client.lrange(key, 0, -1);
        else if (type === 'set') value = await client.smembers(key);
        else if (type === 'stream') value = await client.xrange(key, '-', '+');
        else value = `(${type})`;
        out.push(`${key} ${type}: ${JSON.stringify(value)}`);
      }
      return out;
    },
  };
}
