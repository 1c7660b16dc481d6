/** The step job carries the dispatching execution's trace context through BullMQ as well. */
import { after, describe, it } from 'node:test';
import { deleteRedisPrefix, stopSharedServices, useRedis } from '@cairn/conformance/services';
import { createBullMQQueue } from '@cairn/queue-bullmq';
import { traceOneRun } from './helpers/trace-one-run.js';

const redis = await useRedis();

describe('@cairn/otel over BullMQ', { skip: redis.skipped ? `no Redis: ${redis.reason}` : false }, () => {
  const prefix = `otel${process.pid}`;
  after(async () => {
    if (!redis.skipped) await deleteRedisPrefix(redis.url, `${prefix}:`);
    await stopSharedServices();
  });

  it('a run with a retried step, a sleep, a child and a queued step (its job on BullMQ) is one trace nested by parent ids', async () => {
    if (redis.skipped) return;
    const url = new URL(redis.url);
    const queue = createBullMQQueue({ connection: { host: url.hostname, port: Number(url.port || 6379) }, prefix });
    try {
      await traceOneRun(queue);
    } finally {
      await queue.close();
    }
  });
});
