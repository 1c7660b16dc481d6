import assert from 'node:assert/strict';
import type { Json } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { HOSTILE_STATE_KEYS, label } from '../fixtures/hostile-strings.js';
import { LEASE_MS, createRun, runningRun, snapshotRun, takeOver, terminalRun } from '../fixtures/run-fixtures.js';

/** Store contract: `state`. */
export const stateGroup: CaseGroup = caseGroup('store.state', 'store: state', [
  conformanceCase('get: a run without state is {}', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    assert.deepStrictEqual(await store.state.get(run.id), {});
  }),

  conformanceCase('set: stores, overwrites one key, and leaves the others', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.state.set(run.id, fence, 'cart', { items: [1, 2] }, t0);
    await store.state.set(run.id, fence, 'stage', 'paying', t0 + 1);
    await store.state.set(run.id, fence, 'stage', 'shipped', t0 + 2);
    assert.deepStrictEqual(await store.state.get(run.id), { cart: { items: [1, 2] }, stage: 'shipped' });
  }),

  conformanceCase('set: falsy and null values round-trip and stay distinct', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const values: Record<string, Json> = { zero: 0, no: false, empty: '', nothing: null, obj: {}, arr: [], deep: { a: [null, false, 0, ''] } };
    for (const [k, v] of Object.entries(values)) await store.state.set(run.id, fence, k, v, t0);
    assert.deepStrictEqual(await store.state.get(run.id), values);
  }),

  conformanceCase('set: hostile keys come back byte for byte', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    // A Map, not an object literal: `expected['__proto__'] = ...` would not create a key.
    const expected = new Map<string, Json>();
    for (const [i, key] of HOSTILE_STATE_KEYS.entries()) {
      await store.state.set(run.id, fence, key, { i, key }, t0);
      expected.set(key, { i, key });
    }
    const state = await store.state.get(run.id);
    for (const key of HOSTILE_STATE_KEYS) {
      assert.ok(Object.hasOwn(state, key), `state key ${label(key)} is missing`);
      assert.deepStrictEqual(Object.getOwnPropertyDescriptor(state, key)?.value, expected.get(key), `state key ${label(key)}`);
    }
    assert.equal(Object.keys(state).length, HOSTILE_STATE_KEYS.length, 'no extra or merged keys');
  }),

  conformanceCase('set: 20 concurrent writes of different keys lose nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.state.set(run.id, fence, 'seed', 0, t0);
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.state.set(run.id, fence, `k${i}`, i, t0 + 1)));
    const expected: Record<string, Json> = { seed: 0 };
    for (let i = 0; i < 20; i += 1) expected[`k${i}`] = i;
    assert.deepStrictEqual(await store.state.get(run.id), expected);
  }),

  conformanceCase('set: a null fence is allowed; a stale fence is LEASE_LOST and writes nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, {}, 'worker-a');
    await store.state.set(run.id, null, 'free', 1, t0);
    await takeOver(store, run.id, 'worker-b', t0 + LEASE_MS);
    const before = await snapshotRun(store, run.id);
    await rejectsWithCode(store.state.set(run.id, fence, 'free', 2, t0 + LEASE_MS + 1), 'LEASE_LOST');
    await rejectsWithCode(store.state.set(run.id, fence, 'new', 2, t0 + LEASE_MS + 1), 'LEASE_LOST');
    assert.deepEqual(await snapshotRun(store, run.id), before);
  }),

  conformanceCase('set: a terminal run is RUN_CONFLICT, with its fence or a null one', async ({ store, t0 }) => {
    const run = await terminalRun(store, t0);
    for (const fence of [run.fence, null]) {
      await rejectsWithCode(store.state.set(run.id, fence, 'k', 'v', t0 + 1), 'RUN_CONFLICT', `fence ${fence}`);
    }
    assert.deepStrictEqual(await store.state.get(run.id), {});
  }),

  conformanceCase('state of one run is invisible to another', async ({ store, t0 }) => {
    const a = await runningRun(store, t0);
    const b = await runningRun(store, t0);
    await store.state.set(a.run.id, a.fence, 'k', 'a', t0);
    await store.state.set(b.run.id, b.fence, 'k', 'b', t0);
    assert.deepStrictEqual(await store.state.get(a.run.id), { k: 'a' });
    assert.deepStrictEqual(await store.state.get(b.run.id), { k: 'b' });
  }),
]);
