import assert from 'node:assert/strict';
import { conformanceCase, type ConformanceCase } from '../../case.js';
import { LEASE_MS, newRun, runningRun, snapshotRun, idsOf } from '../../fixtures/run-fixtures.js';
import { uuidv7 } from '../../fixtures/uuid-v7.js';

/** Store contract: `runs.delete`: a run and everything that belongs to it go. */
export const runDeleteCases: ConformanceCase[] = [
  conformanceCase('delete: a missing run is false', async ({ store }) => {
    assert.equal(await store.runs.delete(uuidv7()), false);
  }),

  conformanceCase('delete: removes the run, its steps, attempts, state and events; the key is free again', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, { idempotencyKey: 'once' });
    await store.steps.insert(run.id, fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w' }, t0);
    await store.state.set(run.id, fence, 'k', 'v', t0);
    await store.events.deliver(run.id, 'approved', { by: 'me' }, t0);
    await store.events.deliver(run.id, 'approved', 'keyed', t0, { idempotencyKey: 'send-1' });
    const keep = await runningRun(store, t0, { idempotencyKey: 'other' });
    await store.steps.insert(keep.run.id, keep.fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w' }, t0);
    await store.state.set(keep.run.id, keep.fence, 'k', 'kept', t0);
    await store.events.deliver(keep.run.id, 'approved', 'kept', t0);
    const keptBefore = await snapshotRun(store, keep.run.id, ['approved']);

    assert.equal(await store.runs.delete(run.id), true);
    assert.equal(await store.runs.get(run.id), undefined);
    assert.deepEqual(await store.steps.load(run.id), []);
    assert.deepEqual(await store.history.list(run.id), []);
    assert.deepEqual(await store.state.get(run.id), {});
    assert.equal(await store.events.get(run.id, 'approved', 1), undefined);
    assert.deepEqual(idsOf((await store.runs.list({})).runs), [keep.run.id]);
    assert.deepEqual(await store.runs.findDue(t0 + LEASE_MS * 10, 100), [{ id: keep.run.id, workflow: 'orders', reason: 'lease-expired' }]);
    assert.equal(await store.runs.delete(run.id), false, 'a second delete finds nothing');
    assert.deepEqual(await snapshotRun(store, keep.run.id, ['approved']), keptBefore, 'other runs are untouched');

    const reused = await store.runs.create(newRun({ idempotencyKey: 'once' }), t0 + 1);
    assert.equal(reused.created, true, 'the idempotency key of a deleted run can be used again');
    // A run created again under the deleted id starts with no messages and no send keys.
    await store.runs.create(newRun({ id: run.id }), t0 + 2);
    assert.equal(await store.events.get(run.id, 'approved', 1), undefined);
    assert.deepEqual(await store.events.deliver(run.id, 'approved', 'new', t0 + 3, { idempotencyKey: 'send-1' }), {
      delivered: true,
      duplicate: false,
      seq: 1,
    });
  }),
];
