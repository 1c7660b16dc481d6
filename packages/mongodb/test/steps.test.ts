import assert from 'node:assert/strict';
import { CairnError } from '@cairn/core';
import type { Json } from '@cairn/core';
import { claimedRun, taskStep } from './support/fixtures.js';
import { storeTest } from './support/server.js';

const isCode = (code: string) => (err: unknown) => CairnError.is(err) && err.code === code;

storeTest('insert: idempotent on key, running opens attempt 1, load is ordered by seq', async (store) => {
  const run = await claimedRun(store);
  const b = await store.steps.insert(run.id, run.fence, taskStep('b', 1), 200);
  const a = await store.steps.insert(run.id, run.fence, { key: 'a', name: 'a', kind: 'sleep', seq: 0, status: 'waiting', maxAttempts: 1, wakeAt: 900 }, 201);
  assert.equal(b.created, true);
  assert.equal(a.step.wakeAt, 900);
  const again = await store.steps.insert(run.id, run.fence, taskStep('b', 7, { status: 'scheduled' }), 300);
  assert.equal(again.created, false);
  assert.deepEqual(again.step, b.step);
  assert.deepEqual(
    (await store.steps.load(run.id)).map((s) => s.key),
    ['a', 'b'],
  );
  assert.deepEqual(await store.history.list(run.id), [{ runId: run.id, stepKey: 'b', attempt: 1, status: 'running', worker: 'worker-1', startedAt: 200 }]);
  assert.deepEqual(await store.steps.load('missing'), []);
});

storeTest('a stale fence is LEASE_LOST and writes nothing; a terminal run is RUN_CONFLICT', async (store) => {
  const first = await claimedRun(store, 100, 'a');
  await store.steps.insert(first.id, first.fence, taskStep('s', 0), 200);
  const second = await store.runs.claim(first.id, 'b', 30_000, 100_000); // a took too long
  assert.equal(second?.fence, first.fence + 1);
  const before = await store.steps.load(first.id);
  await assert.rejects(store.steps.insert(first.id, first.fence, taskStep('t', 1), 100_001), isCode('LEASE_LOST'));
  await assert.rejects(
    store.steps.transition(
      first.id,
      first.fence,
      { key: 's', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 1 }, endAttempt: { status: 'succeeded', output: 1 } },
      100_002,
    ),
    isCode('LEASE_LOST'),
  );
  await assert.rejects(store.state.set(first.id, first.fence, 'k', 1, 100_003), isCode('LEASE_LOST'));
  assert.deepEqual(await store.steps.load(first.id), before);
  assert.deepEqual(await store.state.get(first.id), {});
  // The null fence (a queued step worker) skips the fence but not the step CAS.
  const viaQueue = await store.steps.transition(
    first.id,
    null,
    { key: 's', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 2 } },
    100_004,
  );
  assert.equal(viaQueue.output, 2);
  await store.runs.transition(first.id, second!.fence, { from: ['running'], to: 'completed' }, 100_005);
  await assert.rejects(store.steps.insert(first.id, null, taskStep('u', 2), 100_006), isCode('RUN_CONFLICT'));
  await assert.rejects(store.state.set(first.id, null, 'k', 1, 100_006), isCode('RUN_CONFLICT'));
  await assert.rejects(store.steps.insert('missing', null, taskStep('u', 2), 1), isCode('RUN_NOT_FOUND'));
});

storeTest('transition: CAS on status and attempt; step and attempt records written together', async (store) => {
  const run = await claimedRun(store);
  await store.steps.insert(run.id, run.fence, taskStep('pay', 0), 200);
  const from = { status: ['running' as const], attempt: 1 };
  const waiting = await store.steps.transition(
    run.id,
    run.fence,
    {
      key: 'pay',
      from,
      to: { status: 'retry_wait', wakeAt: 500, error: { name: 'E', message: 'x' } },
      endAttempt: { status: 'failed', error: { name: 'E', message: 'x' } },
    },
    300,
  );
  assert.equal(waiting.status, 'retry_wait');
  assert.equal(waiting.wakeAt, 500);
  // The old expectation no longer matches: STEP_CONFLICT, nothing written.
  await assert.rejects(store.steps.transition(run.id, run.fence, { key: 'pay', from, to: { status: 'succeeded' } }, 301), isCode('STEP_CONFLICT'));
  await assert.rejects(store.steps.transition(run.id, run.fence, { key: 'nope', from, to: { status: 'succeeded' } }, 301), isCode('STEP_CONFLICT'));
  const retry = await store.steps.transition(
    run.id,
    run.fence,
    { key: 'pay', from: { status: ['retry_wait'], attempt: 1 }, to: { status: 'running', attempt: 2, wakeAt: null }, startAttempt: { worker: 'w2' } },
    600,
  );
  assert.equal(retry.attempt, 2);
  assert.equal(retry.wakeAt, undefined);
  assert.deepEqual(retry.error, { name: 'E', message: 'x' });
  const done = await store.steps.transition(
    run.id,
    run.fence,
    {
      key: 'pay',
      from: { status: ['running'], attempt: 2 },
      to: { status: 'succeeded', output: { ok: true } },
      endAttempt: { status: 'succeeded', output: { ok: true } },
    },
    700,
  );
  assert.deepEqual(done.output, { ok: true });
  assert.deepEqual(await store.history.list(run.id), [
    { runId: run.id, stepKey: 'pay', attempt: 1, status: 'failed', worker: 'worker-1', startedAt: 200, endedAt: 300, error: { name: 'E', message: 'x' } },
    { runId: run.id, stepKey: 'pay', attempt: 2, status: 'succeeded', worker: 'w2', startedAt: 600, endedAt: 700, output: { ok: true } },
  ]);
});

storeTest('endAttempt without an open attempt record writes the step alone (as the reference store)', async (store) => {
  const run = await claimedRun(store);
  await store.steps.insert(run.id, run.fence, { key: 'nap', name: 'nap', kind: 'sleep', seq: 0, status: 'waiting', maxAttempts: 1, wakeAt: 900 }, 200);
  const done = await store.steps.transition(
    run.id,
    run.fence,
    { key: 'nap', from: { status: ['waiting'], attempt: 1 }, to: { status: 'succeeded', output: null, wakeAt: null }, endAttempt: { status: 'succeeded' } },
    900,
  );
  assert.equal(done.output, null);
  assert.ok('output' in done);
  assert.deepEqual(await store.history.list(run.id), []);
});

storeTest('step outputs: undefined, null, 0, false, empty string distinct, in steps and attempts', async (store) => {
  const run = await claimedRun(store);
  const outputs: Array<Json | undefined> = [undefined, null, 0, false, '', -1.5, 'x'.repeat(1000), { '': { 'a.b': [{ $in: 1 }] } }];
  for (const [i, output] of outputs.entries()) {
    const key = `s${i}`;
    await store.steps.insert(run.id, run.fence, taskStep(key, i), 200 + i);
    const extra = output === undefined ? {} : { output };
    await store.steps.transition(
      run.id,
      run.fence,
      { key, from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', ...extra }, endAttempt: { status: 'succeeded', ...extra } },
      300 + i,
    );
  }
  const steps = await store.steps.load(run.id);
  const history = await store.history.list(run.id);
  for (const [i, output] of outputs.entries()) {
    assert.equal('output' in steps[i]!, output !== undefined, `step ${i}`);
    assert.deepEqual(steps[i]!.output, output);
    assert.equal('output' in history[i]!, output !== undefined, `attempt ${i}`);
    assert.deepEqual(history[i]!.output, output);
  }
});

storeTest('steps inserted directly as succeeded (now/random/uuid) keep their output and open no attempt', async (store) => {
  const run = await claimedRun(store);
  const r = await store.steps.insert(run.id, run.fence, { key: 'now', name: 'now', kind: 'now', seq: 0, status: 'succeeded', maxAttempts: 1, output: 0 }, 200);
  assert.equal(r.step.output, 0);
  assert.deepEqual((await store.steps.load(run.id))[0], r.step);
  assert.deepEqual(await store.history.list(run.id), []);
});

storeTest('parallel step writes of one run (Promise.all over 20 steps) lose nothing', async (store) => {
  const run = await claimedRun(store);
  const keys = Array.from({ length: 20 }, (_, i) => `p${i}`);
  await Promise.all(keys.map((key, i) => store.steps.insert(run.id, run.fence, taskStep(key, i), 200)));
  await Promise.all(
    keys.map((key, i) =>
      store.steps.transition(
        run.id,
        null,
        { key, from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: i }, endAttempt: { status: 'succeeded', output: i } },
        300,
      ),
    ),
  );
  const steps = await store.steps.load(run.id);
  assert.deepEqual(
    steps.map((s) => [s.key, s.status, s.output]),
    keys.map((k, i) => [k, 'succeeded', i]),
  );
  assert.equal((await store.history.list(run.id)).length, 20);
});

storeTest('racing transitions of one step: exactly one wins the CAS', async (store) => {
  const run = await claimedRun(store);
  await store.steps.insert(run.id, run.fence, taskStep('x', 0), 200);
  const results = await Promise.allSettled(
    Array.from({ length: 8 }, (_, i) =>
      store.steps.transition(
        run.id,
        null,
        { key: 'x', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: i }, endAttempt: { status: 'succeeded', output: i } },
        300 + i,
      ),
    ),
  );
  const won = results.filter((r) => r.status === 'fulfilled');
  assert.equal(won.length, 1);
  for (const r of results) if (r.status === 'rejected') assert.ok(CairnError.is(r.reason, 'STEP_CONFLICT'));
  const [step] = await store.steps.load(run.id);
  assert.deepEqual(step?.output, (won[0] as PromiseFulfilledResult<{ output: number }>).value.output);
});
