// The pre-deploy check and exported histories of batch and debounce runs: their handler received
// the input their window decided, not the first start's stored input, and a replay must too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkWorkflowCode, createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import { exportRun } from '@cairn/core/backend';
import { replayHistory } from '@cairn/core/testing';
import { createFixture, rejectsWithCode, waitForStatus } from './helpers/engine-fixture.js';

// A handler that takes a path only a list of inputs has: replayed with one item, it diverges.
const sum = defineWorkflow('sum-batch', async (ctx, items: number[]) => {
  const total = await ctx.step('sum', async () => items.reduce((a, b) => a + b, 0));
  for (const item of items) await ctx.step(`item ${item}`, async () => item);
  // Suspended: the check replays runs that have not ended.
  await ctx.sleep('nap', '1h');
  return total;
});

describe('batch and debounce runs outside the engine', () => {
  it('checkWorkflowCode and an exported history replay a batch run with its list of inputs: compatible', async () => {
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [sum] });
    await engine.start();
    try {
      const first = await engine.startRun(sum, 1 as never, { batch: { maxSize: 3, maxWait: '1m' } });
      for (const n of [2, 3]) await engine.startRun(sum, n as never, { batch: { maxSize: 3, maxWait: '1m' } });
      const suspended = await waitForStatus(store, first.id, 'waiting');
      assert.equal(suspended.input, 1, "the stored input is the first start's");
      const report = await checkWorkflowCode({ store, workflows: [sum] });
      assert.deepEqual(report.counts, { compatible: 1, diverges: 0, 'missing-version': 0, unreadable: 0 }, JSON.stringify(report.runs));
      const exported = await exportRun(store, first.id);
      assert.deepEqual(exported.run.input, [1, 2, 3], 'the export holds the input the handler received');
      assert.equal((await replayHistory(exported, [sum])).verdict, 'compatible');
    } finally {
      await engine.stop();
    }
  });

  it('a store without slots refuses singleton, debounce and batch starts with INVALID_INPUT and creates nothing', async () => {
    const fx = await createFixture({ workflows: [sum] });
    for (const options of [
      { singleton: { key: 'k', mode: 'skip' } },
      { debounce: { key: 'k', period: 10 } },
      { batch: { maxSize: 2, maxWait: 10 } },
    ] as const) {
      await rejectsWithCode(fx.engine.startRun(sum, 1 as never, options), 'INVALID_INPUT');
    }
    assert.equal((await fx.store.runs.list({ limit: 10 })).runs.length, 0);
    await fx.engine.stop();
  });
});
