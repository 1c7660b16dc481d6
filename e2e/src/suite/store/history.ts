import assert from 'node:assert/strict';
import type { StepTransition } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { createRun, newStep, runningRun } from '../fixtures/run-fixtures.js';

const retry = (key: string, from: number, to: number): StepTransition => ({
  key,
  from: { status: ['running'], attempt: from },
  to: { status: 'running', attempt: to },
  endAttempt: { status: 'failed', error: { name: 'Error', message: `attempt ${from}` } },
  startAttempt: { worker: `worker-${to}` },
});

/** Store contract: `history`. */
export const historyGroup: CaseGroup = caseGroup('store.history', 'store: history', [
  conformanceCase('list: a run without attempts has none', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    assert.deepEqual(await store.history.list(run.id), []);
  }),

  conformanceCase('list: ordered by startedAt first, across steps', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    // seq order and start order disagree: the step with the higher seq started first.
    await store.steps.insert(run.id, fence, newStep({ key: 'late', name: 'late', seq: 0, status: 'scheduled', queued: true, worker: undefined }), t0);
    await store.steps.insert(run.id, fence, newStep({ key: 'early', name: 'early', seq: 1 }), t0 + 1);
    await store.steps.transition(
      run.id,
      null,
      { key: 'late', from: { status: ['scheduled'], attempt: 1 }, to: { status: 'running' }, startAttempt: { worker: 'q' } },
      t0 + 9,
    );
    await store.steps.transition(run.id, fence, retry('early', 1, 2), t0 + 5);
    assert.deepEqual(
      (await store.history.list(run.id)).map((a) => [a.stepKey, a.attempt, a.startedAt]),
      [
        ['early', 1, t0 + 1],
        ['early', 2, t0 + 5],
        ['late', 1, t0 + 9],
      ],
    );
  }),

  conformanceCase('list: equal startedAt orders by the step seq, then the attempt number', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    // Inserted in the reverse of the expected order, all at one instant.
    await store.steps.insert(run.id, fence, newStep({ key: 'c', name: 'c', seq: 2 }), t0);
    await store.steps.insert(run.id, fence, newStep({ key: 'b', name: 'b', seq: 1 }), t0);
    await store.steps.insert(run.id, fence, newStep({ key: 'a', name: 'a', seq: 0 }), t0);
    await store.steps.transition(run.id, fence, retry('b', 1, 2), t0);
    await store.steps.transition(run.id, fence, retry('b', 2, 3), t0);
    assert.deepEqual(
      (await store.history.list(run.id)).map((a) => `${a.stepKey}#${a.attempt}`),
      ['a#1', 'b#1', 'b#2', 'b#3', 'c#1'],
    );
  }),

  conformanceCase('list: attempt numbers are stored, never counted from rows', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep(), t0);
    // Jump from attempt 1 to attempt 5: a counting backend would call the second one attempt 2.
    await store.steps.transition(run.id, fence, retry('charge', 1, 5), t0 + 1);
    await store.steps.transition(
      run.id,
      fence,
      { key: 'charge', from: { status: ['running'], attempt: 5 }, to: { status: 'succeeded', output: 5 }, endAttempt: { status: 'succeeded', output: 5 } },
      t0 + 2,
    );
    const history = await store.history.list(run.id);
    assert.deepEqual(
      history.map((a) => [a.attempt, a.status, a.worker]),
      [
        [1, 'failed', 'worker-a'],
        [5, 'succeeded', 'worker-5'],
      ],
    );
    assert.equal((await store.steps.load(run.id))[0]?.attempt, 5);
  }),

  conformanceCase('list: attempts of one run are invisible to another', async ({ store, t0 }) => {
    const a = await runningRun(store, t0);
    const b = await runningRun(store, t0);
    await store.steps.insert(a.run.id, a.fence, newStep(), t0);
    assert.deepEqual(await store.history.list(b.run.id), []);
    assert.deepEqual(
      (await store.history.list(a.run.id)).map((x) => x.runId),
      [a.run.id],
    );
  }),
]);
