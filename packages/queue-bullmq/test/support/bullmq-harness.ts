import type { Queue } from '@cairn/core/backend';
import type { QueueHarness } from '@cairn/conformance';
import { deleteRedisPrefix } from '@cairn/conformance/services';
import { createBullMQQueue, type BullMQQueueOptions } from '@cairn/queue-bullmq';
import { Redis } from 'ioredis';

/** The environment variable through which the child worker process finds the server. */
export const CHILD_URL_ENV = 'CAIRN_QUEUE_BULLMQ_TEST_URL';

/** Short locks and stalled checks, so a killed worker's job comes back within a few seconds. */
export const TEST_TIMINGS = { lockDurationMs: 2_000, stalledIntervalMs: 1_000 } satisfies Partial<BullMQQueueOptions>;

/** ioredis options for `url` (the adapter then owns and closes its client). */
export function redisOptions(url: string): { host: string; port: number; db?: number; password?: string; username?: string } {
  const u = new URL(url);
  const options: ReturnType<typeof redisOptions> = { host: u.hostname, port: Number(u.port || 6379) };
  if (u.pathname.length > 1) options.db = Number(u.pathname.slice(1));
  if (u.password) options.password = decodeURIComponent(u.password);
  if (u.username) options.username = decodeURIComponent(u.username);
  return options;
}

/** Opens a queue on `url` with BullMQ prefix `namespace`, the adapter owning its connection. */
export function openQueue(url: string, namespace: string): Queue {
  return createBullMQQueue({ connection: redisOptions(url), prefix: namespace, ...TEST_TIMINGS });
}

/**
 * The queue conformance harness of the BullMQ adapter: namespace = a BullMQ key prefix per case.
 * The first queue of a case runs on an ioredis client the harness owns (the shared-client path);
 * peers and the worker-death child pass connection options (the adapter-owned path). Keys are
 * deleted after each case.
 */
export function bullmqHarness(options: { url: string; source: string }): QueueHarness {
  const clients = new Map<string, Redis>();
  return {
    name: 'bullmq',
    source: options.source,
    async createQueue(namespace) {
      if (clients.has(namespace)) return openQueue(options.url, namespace);
      const client = new Redis(options.url, { maxRetriesPerRequest: 1 });
      clients.set(namespace, client);
      return createBullMQQueue({ connection: client, prefix: namespace, ...TEST_TIMINGS });
    },
    async destroyQueue(queue, namespace) {
      await queue.close();
      const client = clients.get(namespace);
      clients.delete(namespace);
      // The adapter never closes a client it was given; the harness created this one.
      if (client) await client.quit();
      await deleteRedisPrefix(options.url, `${namespace}:`);
    },
    childWorker: {
      module: new URL('./child-queue.ts', import.meta.url),
      env: () => ({ [CHILD_URL_ENV]: options.url }),
    },
    deliveryTimeoutMs: 10_000,
    redeliveryTimeoutMs: 30_000,
    settleMs: 3_000,
  };
}
