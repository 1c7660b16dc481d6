import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import type { Queue } from '@cairn/core/backend';
import { stopSharedServices } from '@cairn/conformance/services';
import { createPgBossQueue } from '@cairn/queue-pg-boss';
import { TEST_SCHEMA } from './support/pg-boss-harness.js';
import { createDatabase, dropDatabase, providePostgres } from './support/postgres.js';

const server = await providePostgres();
const quietLogger = { warn: () => {}, error: (data: Record<string, unknown>, message: string) => console.error(message, data) };

/** A workflow of three steps (one of them queued, so it travels through the step queue) and a sleep. */
function orderWorkflow(name: string, tier?: string) {
  return defineWorkflow(
    name,
    async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => `reserved ${input.id}`);
      const b = await ctx.step('charge', (step) => ({ charged: true, attempt: step.attempt }), { queued: true });
      await ctx.sleep('cool-off', 300);
      const c = await ctx.step('ship', () => 3);
      return { a, b, c };
    },
    tier === undefined ? {} : { tier },
  );
}

describe('engine over pg-boss', { skip: 'skip' in server ? `no PostgreSQL: ${server.skip}` : false }, () => {
  let dbUrl = '';
  const opened: Queue[] = [];
  const open = (): Queue => {
    const queue = createPgBossQueue({ connectionString: dbUrl, schema: TEST_SCHEMA, pollingIntervalSeconds: 0.5 });
    opened.push(queue);
    return queue;
  };

  before(async () => {
    if ('url' in server) dbUrl = await createDatabase(server.url);
  });
  after(async () => {
    await Promise.allSettled(opened.map((q) => q.close()));
    if (dbUrl) await dropDatabase(dbUrl);
    await stopSharedServices();
  });

  it('runs a workflow with three steps (one queued) and a sleep to completion (per-workflow queues)', async () => {
    const workflow = orderWorkflow('order');
    const store = createMemoryStore();
    const engine = createEngine({ store, queue: open(), workflows: [workflow], logger: quietLogger, recoveryIntervalMs: 500 });
    await engine.start();
    try {
      const handle = await engine.startRun(workflow, { id: 'o-1' });
      const output = await handle.result({ timeout: '30s' });
      assert.deepEqual(output, { a: 'reserved o-1', b: { charged: true, attempt: 1 }, c: 3 });
      const steps = await engine.steps(handle.id);
      assert.deepEqual(
        steps.map((s) => [s.name, s.status]),
        [
          ['reserve', 'succeeded'],
          ['charge', 'succeeded'],
          ['cool-off', 'succeeded'],
          ['ship', 'succeeded'],
        ],
      );
      // Each task step ran exactly once (a sleep records no attempt).
      const history = await engine.history(handle.id);
      assert.deepEqual(
        history.map((h) => [h.stepKey, h.attempt, h.status]),
        [
          ['reserve', 1, 'succeeded'],
          ['charge', 1, 'succeeded'],
          ['ship', 1, 'succeeded'],
        ],
      );
    } finally {
      await engine.stop();
    }
  });

  it('runs two workflows through the shared queues, isolated by job group and tier (shared-groups)', async () => {
    const gold = orderWorkflow('gold-order', 'gold');
    const plain = orderWorkflow('plain-order');
    const store = createMemoryStore();
    const engine = createEngine({
      store,
      queue: open(),
      workflows: [gold, plain],
      queueStrategy: 'shared-groups',
      groupConcurrency: { default: 1, tiers: { gold: 2 } },
      logger: quietLogger,
      recoveryIntervalMs: 500,
    });
    await engine.start();
    try {
      const handles = [
        await engine.startRun(gold, { id: 'g-1' }),
        await engine.startRun(gold, { id: 'g-2' }),
        await engine.startRun(plain, { id: 'p-1' }),
        await engine.startRun(plain, { id: 'p-2' }),
      ];
      const outputs = await Promise.all(handles.map((h) => h.result({ timeout: '60s' })));
      assert.deepEqual(
        outputs.map((o) => (o as { a: string }).a),
        ['reserved g-1', 'reserved g-2', 'reserved p-1', 'reserved p-2'],
      );
    } finally {
      await engine.stop();
    }
  });

  it('a second engine process (its own PgBoss) picks up runs the first one started', async () => {
    const workflow = orderWorkflow('handoff');
    const store = createMemoryStore();
    const producer = createEngine({ store, queue: open(), workflows: [workflow], logger: quietLogger });
    await producer.start({ workers: false });
    const handle = await producer.startRun(workflow, { id: 'h-1' });
    const consumer = createEngine({ store, queue: open(), workflows: [workflow], logger: quietLogger, recoveryIntervalMs: 500 });
    await consumer.start();
    try {
      assert.deepEqual(await handle.result({ timeout: '30s' }), { a: 'reserved h-1', b: { charged: true, attempt: 1 }, c: 3 });
    } finally {
      await consumer.stop();
      await producer.stop();
    }
  });
});
