import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CairnError, createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import type { Queue } from '@cairn/core/backend';
import { deleteRedisPrefix, stopSharedServices } from '@cairn/conformance/services';
import { createBullMQQueue } from '@cairn/queue-bullmq';
import { redisOptions } from './support/bullmq-harness.js';
import { provideRedis } from './support/redis.js';

const server = await provideRedis();
const quietLogger = { warn: () => {}, error: (data: Record<string, unknown>, message: string) => console.error(message, data) };

/** A workflow of three steps (one of them queued, so it travels through the step queue) and a sleep. */
const order = defineWorkflow('order', async (ctx, input: { id: string }) => {
  const a = await ctx.step('reserve', () => `reserved ${input.id}`);
  const b = await ctx.step('charge', (step) => ({ charged: true, attempt: step.attempt }), { queued: true });
  await ctx.sleep('cool-off', 300);
  const c = await ctx.step('ship', () => 3);
  return { a, b, c };
});

describe('engine over BullMQ', { skip: 'skip' in server ? `no Redis: ${server.skip}` : false }, () => {
  const url = 'url' in server ? server.url : '';
  const prefix = `qbe${process.pid}`;
  const opened: Queue[] = [];
  const open = (): Queue => {
    const queue = createBullMQQueue({ connection: redisOptions(url), prefix });
    opened.push(queue);
    return queue;
  };
  after(async () => {
    await Promise.allSettled(opened.map((q) => q.close()));
    if (url) await deleteRedisPrefix(url, `${prefix}:`);
    await stopSharedServices();
  });

  it('runs a workflow with three steps (one queued) and a sleep to completion', async () => {
    const store = createMemoryStore();
    const engine = createEngine({ store, queue: open(), workflows: [order], logger: quietLogger, recoveryIntervalMs: 500 });
    await engine.start();
    try {
      const handle = await engine.startRun(order, { id: 'o-1' });
      assert.deepEqual(await handle.result({ timeout: '30s' }), { a: 'reserved o-1', b: { charged: true, attempt: 1 }, c: 3 });
      const history = await engine.history(handle.id);
      assert.deepEqual(
        history.map((h) => [h.stepKey, h.attempt, h.status]),
        [
          ['reserve', 1, 'succeeded'],
          ['charge', 1, 'succeeded'],
          ['ship', 1, 'succeeded'],
        ],
      );
      const steps = await engine.steps(handle.id);
      assert.deepEqual(
        steps.map((s) => s.status),
        ['succeeded', 'succeeded', 'succeeded', 'succeeded'],
      );
    } finally {
      await engine.stop();
    }
  });

  it("refuses the shared-groups strategy at start with QUEUE_UNSUPPORTED, pointing at 'per-workflow'", async () => {
    const engine = createEngine({ store: createMemoryStore(), queue: open(), workflows: [order], queueStrategy: 'shared-groups', logger: quietLogger });
    await assert.rejects(engine.start(), (error: unknown) => {
      assert.ok(CairnError.is(error, 'QUEUE_UNSUPPORTED'), String(error));
      assert.match((error as Error).message, /per-workflow/);
      return true;
    });
  });
});
