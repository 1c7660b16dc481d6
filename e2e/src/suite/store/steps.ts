import assert from 'node:assert/strict';
import type { Json } from '@cairn/core';
import type { StepTransition } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { assertSameRecord, pick, rejectsWithCode, tally } from '../fixtures/assertions.js';
import { LEASE_MS, createRun, newStep, runningRun, shuffled, snapshotRun, takeOver, terminalRun } from '../fixtures/run-fixtures.js';
import { uuidv7 } from '../fixtures/uuid-v7.js';
import { FALSY_OUTPUTS, SAMPLE_ERROR } from '../fixtures/sample-records.js';

const STEP_FIELDS = [
  'runId',
  'key',
  'name',
  'kind',
  'seq',
  'status',
  'attempt',
  'maxAttempts',
  'queued',
  'output',
  'error',
  'wakeAt',
  'childRunId',
  'turn',
  'createdAt',
  'updatedAt',
] as const;

const succeed = (key: string, attempt = 1, output: Json = 'ok'): StepTransition => ({
  key,
  from: { status: ['running'], attempt },
  to: { status: 'succeeded', output },
  endAttempt: { status: 'succeeded', output },
});

const load = [
  conformanceCase('load: a run without steps loads []', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    assert.deepEqual(await store.steps.load(run.id), []);
  }),

  conformanceCase('load: every step, ordered by seq, whatever the insertion order', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const seqs = shuffled(Array.from({ length: 25 }, (_, i) => i));
    for (const seq of seqs) {
      await store.steps.insert(run.id, fence, newStep({ key: `s${seq}`, name: `s${seq}`, seq, status: 'succeeded', output: seq }), t0 + (24 - seq));
    }
    const loaded = await store.steps.load(run.id);
    assert.deepEqual(
      loaded.map((s) => s.seq),
      Array.from({ length: 25 }, (_, i) => i),
    );
    assert.deepEqual(
      loaded.map((s) => s.output),
      Array.from({ length: 25 }, (_, i) => i),
    );
  }),

  conformanceCase('load: steps of one run never show up in another that uses the same keys', async ({ store, t0 }) => {
    const a = await runningRun(store, t0);
    const b = await runningRun(store, t0);
    await store.steps.insert(a.run.id, a.fence, newStep({ output: 'a', status: 'succeeded' }), t0);
    await store.steps.insert(b.run.id, b.fence, newStep({ output: 'b', status: 'succeeded' }), t0);
    assert.deepEqual(
      (await store.steps.load(a.run.id)).map((s) => [s.runId, s.output]),
      [[a.run.id, 'a']],
    );
    assert.deepEqual(
      (await store.steps.load(b.run.id)).map((s) => [s.runId, s.output]),
      [[b.run.id, 'b']],
    );
  }),
];

const insert = [
  conformanceCase('insert: a running step is attempt 1 and opens attempt 1 in history', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const { step, created } = await store.steps.insert(run.id, fence, newStep({ seq: 3, maxAttempts: 5 }), t0 + 1);
    assert.equal(created, true);
    const expected = {
      runId: run.id,
      key: 'charge',
      name: 'charge',
      kind: 'task',
      seq: 3,
      status: 'running',
      attempt: 1,
      maxAttempts: 5,
      queued: false,
      createdAt: t0 + 1,
      updatedAt: t0 + 1,
    };
    assertSameRecord(pick(step, STEP_FIELDS), expected);
    assertSameRecord(
      (await store.steps.load(run.id)).map((s) => pick(s, STEP_FIELDS)),
      [expected],
    );
    assertSameRecord(await store.history.list(run.id), [
      { runId: run.id, stepKey: 'charge', attempt: 1, status: 'running', worker: 'worker-a', startedAt: t0 + 1 },
    ]);
  }),

  conformanceCase('insert: scheduled and waiting steps open no attempt; fields round-trip', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const child = uuidv7();
    await store.steps.insert(run.id, fence, newStep({ key: 'q', name: 'q', status: 'scheduled', queued: true, wakeAt: t0 + 60_000, worker: undefined }), t0);
    await store.steps.insert(
      run.id,
      fence,
      newStep({ key: 'nap', name: 'nap', kind: 'sleep', seq: 1, status: 'waiting', maxAttempts: 1, wakeAt: t0 + 500, worker: undefined }),
      t0,
    );
    await store.steps.insert(
      run.id,
      fence,
      newStep({ key: 'kid', name: 'kid', kind: 'child', seq: 2, status: 'waiting', maxAttempts: 1, childRunId: child, worker: undefined }),
      t0,
    );
    const [q, nap, kid] = await store.steps.load(run.id);
    assert.deepEqual(pick(q, ['status', 'queued', 'wakeAt', 'attempt']), { status: 'scheduled', queued: true, wakeAt: t0 + 60_000, attempt: 1 });
    assert.deepEqual(pick(nap, ['kind', 'status', 'wakeAt', 'maxAttempts']), { kind: 'sleep', status: 'waiting', wakeAt: t0 + 500, maxAttempts: 1 });
    assert.deepEqual(pick(kid, ['kind', 'childRunId']), { kind: 'child', childRunId: child });
    assert.deepEqual(await store.history.list(run.id), [], 'only a running step opens an attempt');
  }),

  ...FALSY_OUTPUTS.map(({ label, value }) =>
    conformanceCase(`insert: a recorded step with output ${label} round-trips exactly`, async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      const { step } = await store.steps.insert(
        run.id,
        fence,
        newStep({ kind: 'random', status: 'succeeded', worker: undefined, ...(value === undefined ? {} : { output: value }) }),
        t0,
      );
      assert.deepStrictEqual(step.output, value, 'as returned by insert');
      assert.deepStrictEqual((await store.steps.load(run.id))[0]?.output, value, 'as read back by load');
    }),
  ),

  conformanceCase('insert: a failed step stores the whole error record', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep({ status: 'failed', error: SAMPLE_ERROR, worker: undefined }), t0);
    assertSameRecord((await store.steps.load(run.id))[0]?.error, SAMPLE_ERROR);
  }),

  conformanceCase('insert: idempotent on the key — returns the existing step, created: false, writing nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const first = await store.steps.insert(run.id, fence, newStep(), t0);
    const before = await snapshotRun(store, run.id);
    const second = await store.steps.insert(run.id, fence, newStep({ name: 'other', kind: 'sleep', seq: 9, status: 'waiting', worker: 'worker-b' }), t0 + 5);
    assert.equal(second.created, false);
    assertSameRecord(second.step, first.step);
    assert.deepEqual(await snapshotRun(store, run.id), before, 'no second attempt, no overwritten field');
  }),

  conformanceCase('insert: of 8 concurrent inserts of one key exactly one creates, with one attempt', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.steps.insert(run.id, fence, newStep({ worker: `w${i}` }), t0)));
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal((await store.steps.load(run.id)).length, 1);
    assert.equal((await store.history.list(run.id)).length, 1, 'exactly one attempt 1');
  }),

  conformanceCase('insert: a null fence is allowed; a stale fence is LEASE_LOST and writes nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, {}, 'worker-a');
    const queued = await store.steps.insert(run.id, null, newStep({ key: 'free', name: 'free' }), t0);
    assert.equal(queued.created, true);
    await takeOver(store, run.id, 'worker-b', t0 + LEASE_MS);
    const before = await snapshotRun(store, run.id);
    await rejectsWithCode(store.steps.insert(run.id, fence, newStep({ key: 'late', name: 'late', seq: 1 }), t0 + LEASE_MS + 1), 'LEASE_LOST');
    assert.deepEqual(await snapshotRun(store, run.id), before);
  }),

  conformanceCase('insert: a terminal run is RUN_CONFLICT, with its fence or a null one', async ({ store, t0 }) => {
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const run = await terminalRun(store, t0, status);
      for (const fence of [run.fence, null]) {
        await rejectsWithCode(store.steps.insert(run.id, fence, newStep(), t0 + 1), 'RUN_CONFLICT', `insert into a ${status} run with fence ${fence}`);
      }
      assert.deepEqual(await store.steps.load(run.id), []);
      assert.deepEqual(await store.history.list(run.id), []);
    }
  }),
];

const transition = [
  conformanceCase('transition: running → succeeded writes the step and closes its attempt together', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep(), t0);
    const step = await store.steps.transition(run.id, fence, succeed('charge', 1, { receipt: 'r-1' }), t0 + 7);
    assert.deepEqual(pick(step, ['status', 'attempt', 'output', 'updatedAt', 'createdAt']), {
      status: 'succeeded',
      attempt: 1,
      output: { receipt: 'r-1' },
      updatedAt: t0 + 7,
      createdAt: t0,
    });
    assertSameRecord(pick((await store.steps.load(run.id))[0], STEP_FIELDS), pick(step, STEP_FIELDS));
    assertSameRecord(await store.history.list(run.id), [
      { runId: run.id, stepKey: 'charge', attempt: 1, status: 'succeeded', worker: 'worker-a', startedAt: t0, endedAt: t0 + 7, output: { receipt: 'r-1' } },
    ]);
  }),

  conformanceCase('transition: a retry ends attempt 1 and starts attempt 2, both visible in history', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep(), t0);
    const waiting = await store.steps.transition(
      run.id,
      fence,
      {
        key: 'charge',
        from: { status: ['running'], attempt: 1 },
        to: { status: 'retry_wait', error: SAMPLE_ERROR, wakeAt: t0 + 100 },
        endAttempt: { status: 'failed', error: SAMPLE_ERROR },
      },
      t0 + 1,
    );
    assert.deepEqual(pick(waiting, ['status', 'attempt', 'wakeAt']), { status: 'retry_wait', attempt: 1, wakeAt: t0 + 100 });
    const retried = await store.steps.transition(
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
    assert.deepEqual(pick(retried, ['status', 'attempt', 'wakeAt']), { status: 'running', attempt: 2 });
    await store.steps.transition(run.id, fence, succeed('charge', 2, 'paid'), t0 + 101);
    assertSameRecord(await store.history.list(run.id), [
      { runId: run.id, stepKey: 'charge', attempt: 1, status: 'failed', worker: 'worker-a', startedAt: t0, endedAt: t0 + 1, error: SAMPLE_ERROR },
      { runId: run.id, stepKey: 'charge', attempt: 2, status: 'succeeded', worker: 'worker-b', startedAt: t0 + 100, endedAt: t0 + 101, output: 'paid' },
    ]);
  }),

  conformanceCase('transition: one write may end an attempt and start the next', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep(), t0);
    await store.steps.transition(
      run.id,
      fence,
      {
        key: 'charge',
        from: { status: ['running'], attempt: 1 },
        to: { status: 'running', attempt: 2 },
        endAttempt: { status: 'abandoned' },
        startAttempt: { worker: 'worker-b' },
      },
      t0 + 3,
    );
    assertSameRecord(
      (await store.history.list(run.id)).map((a) => pick(a, ['attempt', 'status', 'worker', 'endedAt'])),
      [
        { attempt: 1, status: 'abandoned', worker: 'worker-a', endedAt: t0 + 3 },
        { attempt: 2, status: 'running', worker: 'worker-b' },
      ],
    );
  }),

  conformanceCase('transition: a queued step goes scheduled → running, opening attempt 1', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep({ status: 'scheduled', queued: true, worker: undefined }), t0);
    const running = await store.steps.transition(
      run.id,
      null,
      { key: 'charge', from: { status: ['scheduled'], attempt: 1 }, to: { status: 'running' }, startAttempt: { worker: 'step-worker' } },
      t0 + 2,
    );
    assert.deepEqual(pick(running, ['status', 'attempt']), { status: 'running', attempt: 1 });
    assertSameRecord(await store.history.list(run.id), [
      { runId: run.id, stepKey: 'charge', attempt: 1, status: 'running', worker: 'step-worker', startedAt: t0 + 2 },
    ]);
  }),

  conformanceCase('transition: a status or attempt mismatch is STEP_CONFLICT and writes nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep(), t0);
    const before = await snapshotRun(store, run.id);
    await rejectsWithCode(
      store.steps.transition(run.id, fence, { ...succeed('charge'), from: { status: ['retry_wait', 'scheduled'], attempt: 1 } }, t0 + 1),
      'STEP_CONFLICT',
      'wrong status',
    );
    await rejectsWithCode(store.steps.transition(run.id, fence, succeed('charge', 2), t0 + 1), 'STEP_CONFLICT', 'wrong attempt');
    await rejectsWithCode(store.steps.transition(run.id, fence, succeed('nope'), t0 + 1), 'STEP_CONFLICT', 'missing step');
    assert.deepEqual(await snapshotRun(store, run.id), before);
  }),

  conformanceCase('transition: a null fence is allowed; a stale numeric fence is LEASE_LOST and writes nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, {}, 'worker-a');
    await store.steps.insert(run.id, fence, newStep({ key: 'a', name: 'a' }), t0);
    await store.steps.insert(run.id, fence, newStep({ key: 'b', name: 'b', seq: 1 }), t0);
    await takeOver(store, run.id, 'worker-b', t0 + LEASE_MS);
    const before = await snapshotRun(store, run.id);
    await rejectsWithCode(store.steps.transition(run.id, fence, succeed('a'), t0 + LEASE_MS + 1), 'LEASE_LOST');
    assert.deepEqual(await snapshotRun(store, run.id), before);
    const viaQueue = await store.steps.transition(run.id, null, succeed('b'), t0 + LEASE_MS + 2);
    assert.equal(viaQueue.status, 'succeeded');
  }),

  conformanceCase('transition: a terminal run is RUN_CONFLICT, with its fence or a null one', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep(), t0);
    await store.runs.transition(run.id, fence, { from: ['running'], to: 'cancelled', error: SAMPLE_ERROR }, t0 + 1);
    const before = await snapshotRun(store, run.id);
    for (const f of [fence, null]) {
      await rejectsWithCode(store.steps.transition(run.id, f, succeed('charge'), t0 + 2), 'RUN_CONFLICT', `fence ${f}`);
    }
    assert.deepEqual(await snapshotRun(store, run.id), before);
  }),

  conformanceCase('transition: wakeAt null clears it, undefined leaves it; childRunId is stored', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep({ kind: 'child', status: 'waiting', wakeAt: t0 + 50, worker: undefined }), t0);
    const child = uuidv7();
    const kept = await store.steps.transition(
      run.id,
      fence,
      { key: 'charge', from: { status: ['waiting'], attempt: 1 }, to: { status: 'waiting', childRunId: child } },
      t0 + 1,
    );
    assert.equal(kept.wakeAt, t0 + 50);
    assert.equal(kept.childRunId, child);
    const cleared = await store.steps.transition(
      run.id,
      fence,
      { key: 'charge', from: { status: ['waiting'], attempt: 1 }, to: { status: 'waiting', wakeAt: null } },
      t0 + 2,
    );
    assert.equal(cleared.wakeAt, undefined);
    const loaded = (await store.steps.load(run.id))[0];
    assert.equal(loaded?.wakeAt, undefined);
    assert.equal(loaded?.childRunId, child);
  }),

  conformanceCase(
    'turn: absent until written; insert and transition store it, undefined leaves it, succeeded → succeeded may set it',
    async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      const { step: plain } = await store.steps.insert(run.id, fence, newStep({ key: 'a', name: 'a', seq: 0 }), t0);
      assert.equal(plain.turn, undefined);
      assert.equal('turn' in plain, false, 'an unset turn is absent, not undefined');
      const { step: born } = await store.steps.insert(run.id, fence, newStep({ key: 'b', name: 'b', seq: 1, status: 'succeeded', output: 1, turn: 3 }), t0);
      assert.equal(born.turn, 3);
      const done = await store.steps.transition(run.id, fence, { ...succeed('a'), to: { status: 'succeeded', output: 'ok', turn: 2_000_000 } }, t0 + 1);
      assert.equal(done.turn, 2_000_000);
      // A step finished by a queued worker (no turn) gets its turn later, keeping its output.
      await store.steps.insert(run.id, null, newStep({ key: 'q', name: 'q', seq: 2, status: 'succeeded', output: { v: 7 }, queued: true }), t0);
      const marked = await store.steps.transition(
        run.id,
        fence,
        { key: 'q', from: { status: ['succeeded'], attempt: 1 }, to: { status: 'succeeded', turn: 5 } },
        t0 + 2,
      );
      assert.equal(marked.turn, 5);
      assert.deepEqual(marked.output, { v: 7 });
      const kept = await store.steps.transition(run.id, fence, { key: 'q', from: { status: ['succeeded'], attempt: 1 }, to: { status: 'succeeded' } }, t0 + 3);
      assert.equal(kept.turn, 5);
      const loaded = await store.steps.load(run.id);
      assert.deepEqual(
        loaded.map((s) => [s.key, s.turn]),
        [
          ['a', 2_000_000],
          ['b', 3],
          ['q', 5],
        ],
      );
    },
  ),

  ...FALSY_OUTPUTS.map(({ label, value }) =>
    conformanceCase(`transition: step and attempt output ${label} round-trip exactly`, async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      await store.steps.insert(run.id, fence, newStep(), t0);
      const t: StepTransition =
        value === undefined
          ? { key: 'charge', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded' }, endAttempt: { status: 'succeeded' } }
          : succeed('charge', 1, value);
      await store.steps.transition(run.id, fence, t, t0 + 1);
      assert.deepStrictEqual((await store.steps.load(run.id))[0]?.output, value, 'step output');
      assert.deepStrictEqual((await store.history.list(run.id))[0]?.output, value, 'attempt output');
    }),
  ),

  conformanceCase('transition: of 8 concurrent identical transitions exactly one succeeds', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep(), t0);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        store.steps.transition(
          run.id,
          null,
          {
            key: 'charge',
            from: { status: ['running'], attempt: 1 },
            to: { status: 'running', attempt: 2 },
            endAttempt: { status: 'failed', error: { name: 'Error', message: `w${i}` } },
            startAttempt: { worker: `w${i}` },
          },
          t0 + 1,
        ),
      ),
    );
    const { fulfilled, codes } = tally(results);
    assert.equal(fulfilled, 1, `exactly one compare-and-set must win, ${fulfilled} did`);
    assert.deepEqual(
      codes,
      Array.from({ length: 7 }, () => 'STEP_CONFLICT'),
    );
    const history = await store.history.list(run.id);
    assert.deepEqual(
      history.map((a) => a.attempt),
      [1, 2],
      'one attempt 2, not one per racer',
    );
  }),
];

/** Store contract: `steps`. */
export const stepsGroup: CaseGroup = caseGroup('store.steps', 'store: steps', [...load, ...insert, ...transition]);
