import { createBullMQQueue } from '@cairn/queue-bullmq';
import { openRedisRequestCounter } from './redis-request-counter.js';
import type { QueueAdapter } from './types.js';

/** BullMQ on the bench's Redis (prefix `cairn_bench`), paired with the Redis store. */
export const bullmqQueue: QueueAdapter = {
  name: 'bullmq',
  store: 'redis',
  async create(url) {
    const { hostname, port } = new URL(url);
    return createBullMQQueue({ connection: { host: hostname, port: Number(port) || 6379 }, prefix: 'cairn_bench', onError: () => {} });
  },
  openRequestCounter: openRedisRequestCounter,
};
