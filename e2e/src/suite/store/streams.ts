import assert from 'node:assert/strict';
import type { Json } from '@cairn/core';
import type { StreamEntry, WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { HOSTILE_STATE_KEYS, label } from '../fixtures/hostile-strings.js';
import { LEASE_MS, createRun, runningRun, takeOver, terminalRun } from '../fixtures/run-fixtures.js';

const streams = (store: WorkflowStore) => {
  const s = store.streams;
  assert.ok(s, 'the case requires store.streams');
  return s;
};

/** Entries without their write time, for comparisons. */
const shape = (entries: readonly StreamEntry[]) => entries.map(({ writtenAt: _at, ...rest }) => rest);

/** Store contract: `streams` (optional: `WorkflowStore.streams`). */
export const streamsGroup: CaseGroup = caseGroup('store.streams', 'store: streams', [
  conformanceCase(
    'append and read: chunks in index order, the end marker last, from any index',
    async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      const values: Json[] = [{ token: 'a' }, 0, false, '', null, [1, [2]], 'z'];
      for (const [index, data] of values.entries()) {
        assert.deepEqual(await streams(store).append(run.id, fence, { stream: 'tokens', index, data }, t0 + index), { created: true });
      }
      assert.deepEqual(await streams(store).append(run.id, fence, { stream: 'tokens', index: values.length, close: true }, t0 + 10), { created: true });
      const all = await streams(store).read(run.id, 'tokens', 0, 1000);
      assert.deepEqual(shape(all), [
        ...values.map((data, index) => ({ stream: 'tokens', index, data })),
        { stream: 'tokens', index: values.length, closed: true },
      ]);
      assert.deepEqual(
        all.map((e) => e.writtenAt),
        [...values.map((_, i) => t0 + i), t0 + 10],
      );
      assert.deepEqual(shape(await streams(store).read(run.id, 'tokens', 5, 2)), [
        { stream: 'tokens', index: 5, data: [1, [2]] },
        { stream: 'tokens', index: 6, data: 'z' },
      ]);
      assert.deepEqual(shape(await streams(store).read(run.id, 'tokens', 7, 10)), [{ stream: 'tokens', index: 7, closed: true }]);
      assert.deepEqual(await streams(store).read(run.id, 'tokens', 8, 10), []);
      assert.deepEqual(await streams(store).read(run.id, 'other', 0, 10), []);
      assert.deepEqual(await streams(store).read('no-such-run', 'tokens', 0, 10), []);
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'append: an index already written keeps the first value and writes nothing (a replay)',
    async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      await streams(store).append(run.id, fence, { stream: 's', index: 0, data: 'first' }, t0);
      await streams(store).append(run.id, fence, { stream: 's', index: 1, data: 'second' }, t0);
      assert.deepEqual(await streams(store).append(run.id, fence, { stream: 's', index: 0, data: 'changed' }, t0 + 5), { created: false });
      await streams(store).append(run.id, fence, { stream: 's', index: 2, close: true }, t0);
      // After the end: rewriting a chunk or the marker is still a no-op, not a conflict.
      assert.deepEqual(await streams(store).append(run.id, fence, { stream: 's', index: 1, data: 'again' }, t0 + 5), { created: false });
      assert.deepEqual(await streams(store).append(run.id, fence, { stream: 's', index: 2, close: true }, t0 + 5), { created: false });
      assert.deepEqual(shape(await streams(store).read(run.id, 's', 0, 10)), [
        { stream: 's', index: 0, data: 'first' },
        { stream: 's', index: 1, data: 'second' },
        { stream: 's', index: 2, closed: true },
      ]);
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'append: a gap or a new chunk on a closed stream is STREAM_CONFLICT and writes nothing',
    async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      await rejectsWithCode(streams(store).append(run.id, fence, { stream: 's', index: 1, data: 'gap' }, t0), 'STREAM_CONFLICT', 'a chunk past the end');
      await rejectsWithCode(streams(store).append(run.id, fence, { stream: 's', index: 1, close: true }, t0), 'STREAM_CONFLICT', 'a marker past the end');
      assert.deepEqual(await streams(store).read(run.id, 's', 0, 10), []);
      assert.deepEqual(await streams(store).list(run.id), []);
      await streams(store).append(run.id, fence, { stream: 's', index: 0, data: 'a' }, t0);
      await streams(store).append(run.id, fence, { stream: 's', index: 1, close: true }, t0);
      await rejectsWithCode(streams(store).append(run.id, fence, { stream: 's', index: 1, data: 'late' }, t0), 'STREAM_CONFLICT', 'a chunk after the end');
      await rejectsWithCode(streams(store).append(run.id, fence, { stream: 's', index: 2, data: 'late' }, t0), 'STREAM_CONFLICT', 'a chunk after the end');
      assert.deepEqual(shape(await streams(store).read(run.id, 's', 0, 10)), [
        { stream: 's', index: 0, data: 'a' },
        { stream: 's', index: 1, closed: true },
      ]);
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'append: fenced (stale: LEASE_LOST), refused on a terminal run (RUN_CONFLICT) and a missing one (RUN_NOT_FOUND)',
    async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0, {}, 'worker-a');
      await streams(store).append(run.id, null, { stream: 's', index: 0, data: 'unfenced' }, t0);
      await takeOver(store, run.id, 'worker-b', t0 + LEASE_MS);
      await rejectsWithCode(streams(store).append(run.id, fence, { stream: 's', index: 1, data: 'stale' }, t0 + LEASE_MS + 1), 'LEASE_LOST');
      const ended = await terminalRun(store, t0);
      for (const f of [ended.fence, null]) {
        await rejectsWithCode(streams(store).append(ended.id, f, { stream: 's', index: 0, data: 'x' }, t0 + 1), 'RUN_CONFLICT', `fence ${f}`);
      }
      await rejectsWithCode(streams(store).append('no-such-run', null, { stream: 's', index: 0, data: 'x' }, t0), 'RUN_NOT_FOUND');
      assert.deepEqual(shape(await streams(store).read(run.id, 's', 0, 10)), [{ stream: 's', index: 0, data: 'unfenced' }]);
      assert.deepEqual(await streams(store).list(ended.id), []);
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'list: every stream of the run with its length and end; streams of runs and names are separate',
    async ({ store, t0 }) => {
      const a = await runningRun(store, t0);
      const b = await runningRun(store, t0);
      const fresh = await createRun(store, t0);
      await streams(store).append(a.run.id, a.fence, { stream: 'x', index: 0, data: 1 }, t0);
      await streams(store).append(a.run.id, a.fence, { stream: 'x', index: 1, data: 2 }, t0);
      await streams(store).append(a.run.id, a.fence, { stream: 'y', index: 0, close: true }, t0);
      await streams(store).append(b.run.id, b.fence, { stream: 'x', index: 0, data: 'b' }, t0);
      const listed = await streams(store).list(a.run.id);
      assert.deepEqual(
        [...listed].sort((p, q) => (p.stream < q.stream ? -1 : 1)),
        [
          { stream: 'x', length: 2, closed: false },
          { stream: 'y', length: 0, closed: true },
        ],
      );
      assert.deepEqual(await streams(store).list(b.run.id), [{ stream: 'x', length: 1, closed: false }]);
      assert.deepEqual(await streams(store).list(fresh.id), []);
      assert.deepEqual(shape(await streams(store).read(b.run.id, 'x', 0, 10)), [{ stream: 'x', index: 0, data: 'b' }]);
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'hostile stream names come back byte for byte, each its own stream',
    async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      for (const [i, name] of HOSTILE_STATE_KEYS.entries()) {
        await streams(store).append(run.id, fence, { stream: name, index: 0, data: { i } }, t0);
      }
      for (const [i, name] of HOSTILE_STATE_KEYS.entries()) {
        assert.deepEqual(shape(await streams(store).read(run.id, name, 0, 10)), [{ stream: name, index: 0, data: { i } }], `stream ${label(name)}`);
      }
      const names = (await streams(store).list(run.id)).map((s) => s.stream);
      assert.deepEqual([...names].sort(), [...HOSTILE_STATE_KEYS].sort());
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    '20 concurrent appends of one index store it once; of consecutive indexes, all in order',
    async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => streams(store).append(run.id, fence, { stream: 's', index: 0, data: i }, t0)));
      assert.equal(results.filter((r) => r.created).length, 1, 'exactly one append of index 0 is created');
      const entries = await streams(store).read(run.id, 's', 0, 10);
      assert.equal(entries.length, 1);
      for (let i = 1; i < 30; i += 1) await streams(store).append(run.id, fence, { stream: 's', index: i, data: i }, t0);
      assert.deepEqual(
        (await streams(store).read(run.id, 's', 0, 1000)).map((e) => e.index),
        Array.from({ length: 30 }, (_, i) => i),
      );
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'delete: a run goes with its streams',
    async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      await streams(store).append(run.id, fence, { stream: 's', index: 0, data: 'x' }, t0);
      await store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: null }, t0);
      assert.equal(await store.runs.delete(run.id), true);
      assert.deepEqual(await streams(store).read(run.id, 's', 0, 10), []);
      assert.deepEqual(await streams(store).list(run.id), []);
    },
    { requires: ['streams'] },
  ),
]);
