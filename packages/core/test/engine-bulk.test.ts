import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aesGcmCodec, CairnError, createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import { FAULT_POINTS } from '@cairn/core/testing';
import { countingStore } from '@cairn/core/backend';

const waits = defineWorkflow('bulk-unit', async (ctx) => {
  await ctx.waitForEvent('go');
  return 'went';
});

describe('engine.bulk', () => {
  it('refuses with BULK_UNSUPPORTED on a store without bulk, writing nothing; a dry run still counts', async () => {
    const store = countingStore(createMemoryStore(), { without: ['bulk'] });
    const engine = createEngine({ store, workflows: [waits] });
    await engine.startRun(waits, null);
    await engine.startRun(waits, null);
    store.reset();
    for (const call of [
      () => engine.bulk({ filter: { workflow: waits.name }, action: 'cancel' }),
      () => engine.resumeBulk('00000000-0000-7000-8000-000000000000'),
      () => engine.getBulk('00000000-0000-7000-8000-000000000000'),
      () => engine.listBulk(),
    ]) {
      await assert.rejects(call(), (error: unknown) => CairnError.is(error, 'BULK_UNSUPPORTED'));
    }
    assert.deepEqual(store.writes(), []);
    const dry = await engine.bulk({ filter: { workflow: waits.name }, action: 'cancel', dryRun: true });
    assert.deepEqual([dry.counts.matched, dry.applicable], [2, 2]);
    assert.deepEqual(store.writes(), [], 'the dry run wrote nothing');
  });

  it('works through a payload codec: the record holds no payload, and cancelled runs decode as before', async () => {
    const codec = aesGcmCodec({ keys: { k1: Buffer.alloc(32, 7) }, current: 'k1' });
    const engine = createEngine({ store: createMemoryStore(), workflows: [waits], codec });
    const handle = await engine.startRun(waits, { secret: 'input' });
    const result = await engine.bulk({ filter: { workflow: waits.name }, action: 'cancel' });
    assert.deepEqual(result.counts, { matched: 1, done: 1, skipped: 0, failed: 0 });
    assert.deepEqual((await engine.getBulk(result.operation!.id))?.counts, result.counts);
    assert.deepEqual(
      (await engine.listBulk()).map((o) => o.id),
      [result.operation!.id],
    );
    const run = await engine.getRun(handle.id);
    assert.equal(run?.cancelRequested, true);
    assert.deepEqual(run?.input, { secret: 'input' });
  });

  it('keeps the bulk-page crash point out of the execution points (FAULT_POINTS)', () => {
    assert.ok(!(FAULT_POINTS as readonly string[]).includes('bulk-page'));
  });

  it('keeps at most 100 failures in the record while counting them all', async () => {
    const store = createMemoryStore();
    // A store whose cancel always fails: every run's action fails with STORE_ERROR.
    const failing = Object.create(store, {
      runs: { value: { ...store.runs, requestCancel: async () => Promise.reject(new CairnError('STORE_ERROR', 'down')) } },
    }) as typeof store;
    const engine = createEngine({ store: failing, workflows: [waits] });
    for (let i = 0; i < 105; i += 1) await engine.startRun(waits, null);
    const result = await engine.bulk({ filter: {}, action: 'cancel', pageSize: 50 });
    assert.deepEqual(result.counts, { matched: 105, done: 0, skipped: 0, failed: 105 });
    assert.equal(result.operation?.failures.length, 100);
    assert.deepEqual(new Set(result.operation?.failures.map((f) => f.code)), new Set(['STORE_ERROR']));
    assert.equal(result.outcomes.filter((o) => o.outcome === 'failed' && o.code === 'STORE_ERROR').length, 105);
  });
});
