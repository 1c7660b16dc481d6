import type { WorkflowStore } from '@cairn/core/backend';
import { createRedisStore } from '@cairn/redis';
import { Redis } from 'ioredis';
import { StoreProbe } from '../instrument/counting-store.js';
import { RoundTripCounter } from '../instrument/round-trips.js';
import type { BackendAdapter, BackendInstance, StoreSpec } from './types.js';

let seq = 0;

/** Counts every command the client sends (`sendCommand` is where ioredis writes each one). */
function instrument(client: Redis, counter: RoundTripCounter): Redis {
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }, stream?: unknown) => {
    counter.hit(command.name);
    return (send as (c: unknown, s?: unknown) => unknown)(command, stream);
  }) as typeof client.sendCommand;
  return client;
}

/** Opens an uncounted store, as a worker process does. */
export async function connectRedisStore(spec: StoreSpec): Promise<{ store: WorkflowStore; close(): Promise<void> }> {
  const client = new Redis(spec.url, { maxRetriesPerRequest: 3 });
  const store = createRedisStore({ redis: client, prefix: spec.namespace });
  return {
    store,
    close: async () => {
      await store.close();
      await client.quit();
    },
  };
}

/** Redis through `@cairn/redis` (ioredis, single server: one Lua script per transition). */
export const redisBackend: BackendAdapter = {
  name: 'redis',
  title: 'Redis',
  async setup(ctx): Promise<BackendInstance> {
    const server = await ctx.servers.service('redis');
    const counter = new RoundTripCounter();
    const clients: Redis[] = [];
    const client = (counted: boolean) => {
      const c = new Redis(server.url, { maxRetriesPerRequest: 3 });
      clients.push(c);
      return counted ? instrument(c, counter) : c;
    };
    return {
      name: 'redis',
      title: 'Redis',
      server: `${server.product} (${server.durability})`,
      driverCounted: true,
      counter,
      async openStore() {
        const prefix = `bench${process.pid}_${++seq}`;
        const probe = new StoreProbe(createRedisStore({ redis: client(true), prefix }), counter);
        return {
          probe,
          spec: { backend: 'redis', url: server.url, namespace: prefix },
          peer: async () => createRedisStore({ redis: client(false), prefix }),
          close: async () => {},
        };
      },
      async close() {
        await Promise.allSettled(clients.map((c) => c.quit()));
      },
    };
  },
};
