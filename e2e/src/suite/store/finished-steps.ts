import assert from 'node:assert/strict';
import type { NewStep, WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { runningRun, takeOver, terminalRun } from '../fixtures/run-fixtures.js';
import { SAMPLE_ERROR } from '../fixtures/sample-records.js';

// Stores without `capabilities.insertFinished` keep two writes per inline step (the engine records
// the start first there); these cases are about the one-write contract, so they have nothing to check.
const supported = (store: WorkflowStore) => store.capabilities.insertFinished === true;

/** A step recorded already finished by its first attempt (what an inline step's one write is). */
function finishedStep(overrides: Partial<NewStep> = {}): NewStep {
  return {
    key: 'charge',
    name: 'charge',
    kind: 'task',
    seq: 0,
    status: 'succeeded',
    maxAttempts: 3,
    output: { paid: 42 },
    turn: 1,
    finishedAttempt: { status: 'succeeded', worker: 'worker-a', startedAt: 0 },
    ...overrides,
  };
}

const finishedCase = (name: string, run: (env: CaseEnv) => Promise<void>) =>
  conformanceCase(name, async (env) => {
    if (!supported(env.store)) return;
    await run(env);
  });

/** Store: `steps.insert` of a finished step (capability `insertFinished`): one atomic, fenced write. */
export const finishedStepsGroup: CaseGroup = caseGroup('store.finished-steps', 'store: a step recorded finished, with its attempt, in one write', [
  finishedCase('a succeeded step is recorded with its finished attempt 1 and the fence that recorded it', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const { step, created } = await store.steps.insert(
      run.id,
      fence,
      finishedStep({ finishedAttempt: { status: 'succeeded', worker: 'worker-a', startedAt: t0 + 1 } }),
      t0 + 5,
    );
    assert.equal(created, true);
    assert.deepEqual(
      { status: step.status, attempt: step.attempt, output: step.output, turn: step.turn, fence: step.fence, createdAt: step.createdAt },
      { status: 'succeeded', attempt: 1, output: { paid: 42 }, turn: 1, fence, createdAt: t0 + 5 },
    );
    assert.deepEqual(
      (await store.steps.load(run.id)).map((s) => [s.key, s.status, s.fence]),
      [['charge', 'succeeded', fence]],
    );
    assert.deepEqual(
      (await store.history.list(run.id)).map((a) => [a.stepKey, a.attempt, a.status, a.worker, a.startedAt, a.endedAt]),
      [['charge', 1, 'succeeded', 'worker-a', t0 + 1, t0 + 5]],
    );
  }),

  finishedCase('a step waiting for its retry is recorded with its failed attempt 1 and the error', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const step: NewStep = {
      ...finishedStep({
        status: 'retry_wait',
        wakeAt: t0 + 100,
        finishedAttempt: { status: 'failed', worker: 'worker-a', startedAt: t0, error: SAMPLE_ERROR },
      }),
    };
    delete step.output;
    delete step.turn;
    const written = (await store.steps.insert(run.id, fence, step, t0 + 2)).step;
    assert.deepEqual([written.status, written.attempt, written.wakeAt], ['retry_wait', 1, t0 + 100]);
    const history = await store.history.list(run.id);
    assert.deepEqual(
      history.map((a) => [a.attempt, a.status, a.error, a.startedAt, a.endedAt]),
      [[1, 'failed', SAMPLE_ERROR, t0, t0 + 2]],
    );
    // The next attempt opens as usual.
    await store.steps.transition(
      run.id,
      fence,
      {
        key: 'charge',
        from: { status: ['retry_wait'], attempt: 1 },
        to: { status: 'running', attempt: 2, wakeAt: null },
        startAttempt: { worker: 'worker-b' },
      },
      t0 + 100,
    );
    assert.deepEqual(
      (await store.history.list(run.id)).map((a) => [a.attempt, a.status]),
      [
        [1, 'failed'],
        [2, 'running'],
      ],
    );
  }),

  finishedCase('a stale fence is refused with LEASE_LOST and writes neither the step nor its attempt', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await takeOver(store, run.id, 'worker-b', t0 + 1);
    await rejectsWithCode(store.steps.insert(run.id, fence, finishedStep(), t0 + 2), 'LEASE_LOST');
    assert.deepEqual(await store.steps.load(run.id), []);
    assert.deepEqual(await store.history.list(run.id), []);
  }),

  finishedCase('a terminal run is refused with RUN_CONFLICT and nothing is written', async ({ store, t0 }) => {
    const run = await terminalRun(store, t0);
    await rejectsWithCode(store.steps.insert(run.id, null, finishedStep(), t0 + 2), 'RUN_CONFLICT');
    assert.deepEqual(await store.steps.load(run.id), []);
    assert.deepEqual(await store.history.list(run.id), []);
  }),

  finishedCase('idempotent on (run, key): a repeat returns the existing step (created: false) and adds no attempt', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, finishedStep({ finishedAttempt: { status: 'succeeded', worker: 'worker-a', startedAt: t0 } }), t0 + 1);
    const again = await store.steps.insert(
      run.id,
      fence,
      finishedStep({ status: 'failed', output: 'other', finishedAttempt: { status: 'failed', worker: 'worker-z', startedAt: t0 + 2 } }),
      t0 + 3,
    );
    assert.equal(again.created, false);
    assert.deepEqual([again.step.status, again.step.output], ['succeeded', { paid: 42 }]);
    assert.deepEqual(
      (await store.history.list(run.id)).map((a) => [a.attempt, a.status, a.worker]),
      [[1, 'succeeded', 'worker-a']],
    );
  }),

  finishedCase('a running step is stamped with the fence that recorded it; an unfenced insert carries none', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const { step } = await store.steps.insert(
      run.id,
      fence,
      { key: 'open', name: 'open', kind: 'task', seq: 0, status: 'running', maxAttempts: 1, worker: 'w' },
      t0 + 1,
    );
    assert.equal(step.fence, fence);
    const unfenced = (
      await store.steps.insert(run.id, null, { key: 'free', name: 'free', kind: 'task', seq: 1, status: 'scheduled', maxAttempts: 1, queued: true }, t0 + 2)
    ).step;
    assert.equal(unfenced.fence, undefined);
  }),

  finishedCase('a finished attempt with a live step status is refused with INVALID_INPUT and nothing is written', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await rejectsWithCode(store.steps.insert(run.id, fence, finishedStep({ status: 'running', worker: 'w' }), t0 + 1), 'INVALID_INPUT');
    assert.deepEqual(await store.steps.load(run.id), []);
  }),
]);
