import assert from 'node:assert/strict';
import type { RetryRecord, WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { createRun, LEASE_MS, newStep, runningRun, terminalRun } from '../fixtures/run-fixtures.js';

const retry = (at: number, forgottenSteps: string[] = []): RetryRecord => ({
  at,
  previousStatus: 'failed',
  previousError: { name: 'Error', message: 'run failed' },
  forgottenSteps,
});

/** A failed run with steps a (succeeded), b (failed, 2 attempts), c (running): what a retry meets. */
async function failedRunWithSteps(store: WorkflowStore, t0: number) {
  const { run, fence } = await runningRun(store, t0);
  await store.steps.insert(run.id, fence, newStep({ key: 'a', name: 'a', seq: 0, status: 'succeeded', output: 'A', turn: 1 }), t0 + 1);
  await store.steps.insert(run.id, fence, newStep({ key: 'b', name: 'b', seq: 1 }), t0 + 2);
  await store.steps.transition(
    run.id,
    fence,
    {
      key: 'b',
      from: { status: ['running'], attempt: 1 },
      to: { status: 'running', attempt: 2 },
      endAttempt: { status: 'failed', error: { name: 'Error', message: 'boom' } },
      startAttempt: { worker: 'worker-a' },
    },
    t0 + 3,
  );
  await store.steps.transition(
    run.id,
    fence,
    {
      key: 'b',
      from: { status: ['running'], attempt: 2 },
      to: { status: 'failed', error: { name: 'Error', message: 'boom' }, turn: 2 },
      endAttempt: { status: 'failed', error: { name: 'Error', message: 'boom' } },
    },
    t0 + 4,
  );
  await store.steps.insert(run.id, fence, newStep({ key: 'c', name: 'c', seq: 2 }), t0 + 5);
  await store.state.set(run.id, fence, 'k', 'v', t0 + 5);
  await store.events.deliver(run.id, 'go', { n: 1 }, t0 + 5);
  const failed = await store.runs.transition(run.id, fence, { from: ['running'], to: 'failed', error: { name: 'Error', message: 'run failed' } }, t0 + 6);
  return { run: failed, fence };
}

/** The store operations behind retry, fork, findRun, listRuns summaries and retention. */
export const runOperationsGroup: CaseGroup = caseGroup('store.run-operations', 'store: reopen, find by key, summaries, listEnded, conditional delete', [
  conformanceCase(
    'reopen: a failed run becomes pending and due, fence + 1, error cleared, forgotten steps and their attempts gone, the rest kept',
    async ({ store, t0 }) => {
      const { run } = await failedRunWithSteps(store, t0);
      const reopened = await store.runs.reopen(run.id, { fence: run.fence, forget: ['b', 'c'], retry: retry(t0 + 10, ['b', 'c']) }, t0 + 10);
      assert.equal(reopened.status, 'pending');
      assert.equal(reopened.fence, run.fence + 1);
      assert.equal(reopened.wakeAt, t0 + 10);
      assert.equal(reopened.error, undefined);
      assert.equal(reopened.lease, undefined);
      assert.equal(reopened.cancelRequested, false);
      assert.deepEqual(reopened.retries, [retry(t0 + 10, ['b', 'c'])]);
      const read = await store.runs.get(run.id);
      assert.deepEqual(read?.retries, reopened.retries, 'get returns the retry record');
      assert.deepEqual(
        (await store.steps.load(run.id)).map((s) => [s.key, s.status, s.output]),
        [['a', 'succeeded', 'A']],
      );
      assert.deepEqual(
        (await store.history.list(run.id)).map((a) => a.stepKey),
        [],
        'step a was recorded succeeded without attempts; b and c lost theirs',
      );
      assert.deepEqual(await store.state.get(run.id), { k: 'v' }, 'state is kept');
      assert.deepEqual((await store.events.get(run.id, 'go', 1))?.payload, { n: 1 }, 'messages are kept');
      assert.ok(
        (await store.runs.findDue(t0 + 10, 10)).some((d) => d.id === run.id),
        'the reopened run is due',
      );
    },
  ),

  conformanceCase('reopen: a writer holding the old fence is fenced off; a claim takes the run at the new fence', async ({ store, t0 }) => {
    const { run, fence } = await failedRunWithSteps(store, t0);
    await store.runs.reopen(run.id, { fence: run.fence, forget: ['b', 'c'], retry: retry(t0 + 10) }, t0 + 10);
    await rejectsWithCode(
      store.steps.insert(run.id, fence, newStep({ key: 'x', name: 'x', seq: 3 }), t0 + 11),
      'LEASE_LOST',
      'a step insert with the old fence',
    );
    await rejectsWithCode(store.state.set(run.id, fence, 'k', 'stale', t0 + 11), 'LEASE_LOST', 'a state write with the old fence');
    await rejectsWithCode(
      store.runs.transition(run.id, fence, { from: ['pending', 'running'], to: 'completed' }, t0 + 11),
      'LEASE_LOST',
      'a run transition with the old fence',
    );
    const claimed = await store.runs.claim(run.id, 'worker-b', LEASE_MS, t0 + 12);
    assert.equal(claimed?.fence, run.fence + 2);
    assert.deepEqual(await store.state.get(run.id), { k: 'v' }, 'the stale writes changed nothing');
  }),

  conformanceCase(
    'reopen: refused with RUN_CONFLICT for a run that is not failed or cancelled, or whose fence moved; RUN_NOT_FOUND when missing; nothing written',
    async ({ store, t0 }) => {
      const { run: running } = await runningRun(store, t0);
      await rejectsWithCode(
        store.runs.reopen(running.id, { fence: running.fence, forget: [], retry: retry(t0) }, t0 + 1),
        'RUN_CONFLICT',
        'reopen of a running run',
      );
      assert.equal((await store.runs.get(running.id))?.status, 'running');
      const completed = await terminalRun(store, t0, 'completed');
      await rejectsWithCode(
        store.runs.reopen(completed.id, { fence: completed.fence, forget: [], retry: retry(t0) }, t0 + 1),
        'RUN_CONFLICT',
        'reopen of a completed run',
      );
      const { run: failed } = await failedRunWithSteps(store, t0);
      await rejectsWithCode(
        store.runs.reopen(failed.id, { fence: failed.fence - 1, forget: ['b'], retry: retry(t0) }, t0 + 1),
        'RUN_CONFLICT',
        'reopen at a stale fence',
      );
      const after = await store.runs.get(failed.id);
      assert.equal(after?.status, 'failed');
      assert.equal(after?.retries, undefined);
      assert.equal((await store.steps.load(failed.id)).length, 3, 'no step was forgotten');
      const cancelled = await terminalRun(store, t0, 'cancelled');
      const reopened = await store.runs.reopen(
        cancelled.id,
        { fence: cancelled.fence, forget: [], retry: { ...retry(t0 + 2), previousStatus: 'cancelled' } },
        t0 + 2,
      );
      assert.equal(reopened.status, 'pending');
      await rejectsWithCode(
        store.runs.reopen(cancelled.id, { fence: cancelled.fence, forget: [], retry: retry(t0 + 3) }, t0 + 3),
        'RUN_CONFLICT',
        'a second reopen at the same fence',
      );
      await rejectsWithCode(store.runs.reopen('no-such-run', { fence: 0, forget: [], retry: retry(t0) }, t0), 'RUN_NOT_FOUND', 'reopen of a missing run');
    },
  ),

  conformanceCase('reopen: a passed deadline can be removed, and each retry is appended', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, { deadline: t0 + 5 });
    await store.runs.transition(
      run.id,
      fence,
      { from: ['running'], to: 'failed', error: { name: 'CairnError', code: 'DEADLINE_EXCEEDED', message: 'late' } },
      t0 + 6,
    );
    const first = await store.runs.reopen(run.id, { fence, forget: [], retry: retry(t0 + 7), deadline: null }, t0 + 7);
    assert.equal(first.deadline, undefined);
    const claimed = await store.runs.claim(run.id, 'w', LEASE_MS, t0 + 8);
    assert.ok(claimed);
    await store.runs.transition(run.id, claimed.fence, { from: ['running'], to: 'failed', error: { name: 'Error', message: 'again' } }, t0 + 9);
    const second = await store.runs.reopen(run.id, { fence: claimed.fence, forget: [], retry: retry(t0 + 10), deadline: t0 + 99 }, t0 + 10);
    assert.equal(second.deadline, t0 + 99);
    assert.deepEqual(
      second.retries?.map((r) => r.at),
      [t0 + 7, t0 + 10],
    );
  }),

  conformanceCase('findByIdempotencyKey: finds the run of (workflow, key); another workflow or a deleted run finds nothing', async ({ store, t0 }) => {
    const run = await createRun(store, t0, { workflow: 'orders', idempotencyKey: 'order-7' });
    assert.equal((await store.runs.findByIdempotencyKey('orders', 'order-7'))?.id, run.id);
    assert.deepEqual((await store.runs.findByIdempotencyKey('orders', 'order-7'))?.input, run.input, 'the whole record');
    assert.equal(await store.runs.findByIdempotencyKey('refunds', 'order-7'), undefined);
    assert.equal(await store.runs.findByIdempotencyKey('orders', 'order-8'), undefined);
    assert.equal(await store.runs.delete(run.id), true);
    assert.equal(await store.runs.findByIdempotencyKey('orders', 'order-7'), undefined);
    const again = await store.runs.create({ id: `${run.id}-2`, workflow: 'orders', version: 'v1', input: null, idempotencyKey: 'order-7' }, t0 + 1);
    assert.equal(again.created, true, 'the key of a deleted run is free');
    assert.equal((await store.runs.findByIdempotencyKey('orders', 'order-7'))?.id, `${run.id}-2`);
  }),

  conformanceCase('list: summaries without payloads, the error reduced; filters by parent and by idempotency key', async ({ store, t0 }) => {
    const parent = await createRun(store, t0, { workflow: 'parent', input: { big: 'x'.repeat(1000) } });
    const kid1 = await createRun(store, t0 + 1, { workflow: 'kid', parent: { runId: parent.id, stepKey: 'k1' } });
    const kid2 = await createRun(store, t0 + 2, { workflow: 'kid', parent: { runId: parent.id, stepKey: 'k2' } });
    await createRun(store, t0 + 3, { workflow: 'kid' });
    const keyed = await createRun(store, t0 + 4, { workflow: 'kid', idempotencyKey: 'the-key' });
    // The parent names its children in its steps (Redis lists children through them).
    const claimed = await store.runs.claim(parent.id, 'w', LEASE_MS, t0 + 5);
    assert.ok(claimed);
    await store.steps.insert(
      parent.id,
      claimed.fence,
      newStep({ key: 'k1', name: 'k1', kind: 'child', seq: 0, status: 'waiting', childRunId: kid1.id }),
      t0 + 5,
    );
    await store.steps.insert(
      parent.id,
      claimed.fence,
      newStep({ key: 'k2', name: 'k2', kind: 'child', seq: 1, status: 'waiting', childRunId: kid2.id }),
      t0 + 5,
    );
    await store.runs.transition(
      parent.id,
      claimed.fence,
      { from: ['running'], to: 'failed', error: { name: 'TypeError', message: 'bad', code: 'X', stack: 'at line 1', data: { secret: 1 } } },
      t0 + 6,
    );

    const all = (await store.runs.list({})).runs;
    assert.equal(all.length, 5);
    for (const summary of all) {
      assert.ok(!('input' in summary) && !('output' in summary) && !('retries' in summary), `summary of ${summary.id} has no payload`);
    }
    const failed = all.find((r) => r.id === parent.id);
    assert.deepEqual(failed?.error, { name: 'TypeError', code: 'X', message: 'bad' }, 'the error reduced to name, code and message');
    assert.deepEqual(
      (await store.runs.list({ parentRunId: parent.id })).runs.map((r) => r.id),
      [kid2.id, kid1.id],
    );
    assert.deepEqual(
      (await store.runs.list({ parentRunId: parent.id, limit: 1 })).runs.map((r) => r.id),
      [kid2.id],
    );
    const page1 = await store.runs.list({ parentRunId: parent.id, limit: 1 });
    assert.ok(page1.nextCursor);
    assert.deepEqual(
      (await store.runs.list({ parentRunId: parent.id, limit: 1, cursor: page1.nextCursor })).runs.map((r) => r.id),
      [kid1.id],
    );
    assert.deepEqual(
      (await store.runs.list({ parentRunId: parent.id, createdAfter: t0 + 2 })).runs.map((r) => r.id),
      [kid2.id],
    );
    assert.deepEqual((await store.runs.list({ parentRunId: parent.id, status: 'failed' })).runs, []);
    assert.deepEqual((await store.runs.list({ parentRunId: kid1.id })).runs, []);
    assert.deepEqual(
      (await store.runs.list({ workflow: 'kid', idempotencyKey: 'the-key' })).runs.map((r) => r.id),
      [keyed.id],
    );
    assert.deepEqual((await store.runs.list({ workflow: 'kid', idempotencyKey: 'the-key', status: 'failed' })).runs, []);
    assert.deepEqual((await store.runs.list({ workflow: 'parent', idempotencyKey: 'the-key' })).runs, []);
    await rejectsWithCode(store.runs.list({ idempotencyKey: 'the-key' }), 'INVALID_INPUT', 'an idempotency key filter without a workflow');
  }),

  conformanceCase('listEnded: runs of one status last updated before the cutoff, in batches with a cursor, never an active run', async ({ store, t0 }) => {
    const ended: string[] = [];
    for (let i = 0; i < 5; i += 1) ended.push((await terminalRun(store, t0 + i, 'completed')).id);
    // Ties: several runs ended in the same millisecond must each be listed once across batches.
    for (let i = 0; i < 5; i += 1) ended.push((await terminalRun(store, t0 + 2, 'completed')).id);
    await terminalRun(store, t0 + 100, 'completed');
    const failed = await terminalRun(store, t0, 'failed');
    await runningRun(store, t0);
    await createRun(store, t0);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 10; guard += 1) {
      const batch = await store.runs.listEnded({ status: 'completed', updatedBefore: t0 + 50, limit: 2, ...(cursor === undefined ? {} : { cursor }) });
      assert.ok(batch.runs.length <= 2);
      for (const run of batch.runs) {
        assert.equal(run.status, 'completed');
        assert.ok(run.updatedAt < t0 + 50);
        seen.push(run.id);
      }
      if (batch.nextCursor === undefined) break;
      cursor = batch.nextCursor;
    }
    assert.deepEqual([...seen].sort(), [...ended].sort(), 'every completed run before the cutoff, once');
    assert.deepEqual(
      (await store.runs.listEnded({ status: 'failed', updatedBefore: t0 + 50, limit: 10 })).runs.map((r) => r.id),
      [failed.id],
    );
    assert.deepEqual((await store.runs.listEnded({ status: 'completed', updatedBefore: t0, limit: 10 })).runs, []);
  }),

  conformanceCase('delete with a condition: only a run of those statuses updated before the time; a run reopened meanwhile is kept', async ({ store, t0 }) => {
    const done = await terminalRun(store, t0, 'completed');
    assert.equal(await store.runs.delete(done.id, { statuses: ['failed'], updatedBefore: t0 + 10 }), false, 'another status');
    assert.equal(await store.runs.delete(done.id, { statuses: ['completed'], updatedBefore: t0 }), false, 'not before the time');
    assert.ok(await store.runs.get(done.id));
    assert.equal(await store.runs.delete(done.id, { statuses: ['completed'], updatedBefore: t0 + 10 }), true);
    assert.equal(await store.runs.get(done.id), undefined);
    const failed = await terminalRun(store, t0, 'failed');
    await store.runs.reopen(failed.id, { fence: failed.fence, forget: [], retry: retry(t0 + 1) }, t0 + 1);
    assert.equal(
      await store.runs.delete(failed.id, { statuses: ['failed'], updatedBefore: t0 + 10 }),
      false,
      'a pruner that listed it failed must not delete it once reopened',
    );
    assert.equal((await store.runs.get(failed.id))?.status, 'pending');
  }),
]);
