import assert from 'node:assert/strict';
import { CairnError } from '@cairn/core';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../src/index.js';
import { claimedRun, taskStep } from './support/fixtures.js';
import { freshStore, skipReason, storeTest } from './support/server.js';
import { test } from 'node:test';

storeTest('payloads of maxPayloadBytes everywhere in one run round-trip (the run document holds them all)', async (store) => {
  assert.equal(store.capabilities.maxPayloadBytes, DEFAULT_MAX_PAYLOAD_BYTES);
  const big = 'é'.repeat(DEFAULT_MAX_PAYLOAD_BYTES / 2 - 1); // 2 MiB of UTF-8 JSON with the quotes
  assert.equal(Buffer.byteLength(JSON.stringify(big)), DEFAULT_MAX_PAYLOAD_BYTES);
  const run = await claimedRun(store);
  await store.steps.insert(run.id, run.fence, taskStep('big', 0), 200);
  await store.steps.transition(
    run.id,
    run.fence,
    { key: 'big', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: big }, endAttempt: { status: 'succeeded', output: big } },
    201,
  );
  await store.state.set(run.id, run.fence, 'big', big, 202);
  await store.events.deliver(run.id, 'big', big, 203);
  const done = await store.runs.transition(run.id, run.fence, { from: ['running'], to: 'completed', output: big }, 204);
  assert.equal(done.output, big);
  assert.equal((await store.steps.load(run.id))[0]?.output, big);
  assert.equal((await store.history.list(run.id))[0]?.output, big);
  assert.equal((await store.state.get(run.id)).big, big);
  assert.equal((await store.events.get(run.id, 'big', 1))?.payload, big);
});

storeTest('a write that cannot fit a 16 MiB document is PAYLOAD_TOO_LARGE and writes nothing', async (store) => {
  const run = await claimedRun(store);
  const huge = 'x'.repeat(17 * 1024 * 1024);
  await assert.rejects(store.state.set(run.id, run.fence, 'k', huge, 200), (err) => CairnError.is(err, 'PAYLOAD_TOO_LARGE'));
  await assert.rejects(store.runs.create({ id: 'huge', workflow: 'wf', version: 'v', input: huge }, 1), (err) => CairnError.is(err, 'PAYLOAD_TOO_LARGE'));
  assert.deepEqual(await store.state.get(run.id), {});
  assert.equal(await store.runs.get('huge'), undefined);
});

test('options: maxPayloadBytes and collectionPrefix', { skip: skipReason }, async () => {
  const store = await freshStore({ maxPayloadBytes: 1024, collectionPrefix: 'custom_x_' });
  assert.equal(store.capabilities.maxPayloadBytes, 1024);
  assert.deepEqual(store.collections, { runs: 'custom_x_runs', versions: 'custom_x_versions' });
});

test('driver failures are STORE_ERROR with the driver error as cause', { skip: skipReason }, async () => {
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient('mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300');
  const { createMongoStore } = await import('../src/index.js');
  const store = createMongoStore({ db: client.db('nowhere') });
  await assert.rejects(store.runs.get('x'), (err) => CairnError.is(err, 'STORE_ERROR') && (err as CairnError).cause instanceof Error);
  await client.close();
});
