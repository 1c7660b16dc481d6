import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMemoryStore, defineWorkflow } from '@cairn/core';
import { newStepRecord, type NewStep, type WorkflowStore } from '@cairn/core/backend';
import { inlineMemoryEngine } from './helpers/inline-memory-engine.js';

// Issue 18: the memory store keeps a step in its own compact shape (memory/stored-step.ts) and
// builds the contract's records on the way out. These tests hold what it returns to what it
// returned when it kept the records themselves: `newStepRecord` for a new step, key order included,
// attempt records as the insert and transitions wrote them, the history's order, and isolation.

const NOW = 1_750_000_000_000;

async function runOn(store: WorkflowStore, id: string): Promise<number> {
  await store.runs.create({ id, workflow: 'wf', version: 'v1', input: null }, NOW);
  const run = await store.runs.claim(id, 'w1', 60_000, NOW);
  assert.ok(run);
  return run.fence;
}

const inserts: Array<[string, NewStep]> = [
  ['running, with a worker', { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w1' }],
  ['running, without a worker', { key: 'b', name: 'b', kind: 'task', seq: 1, status: 'running', maxAttempts: 1 }],
  [
    'succeeded in one write, with output and turn',
    {
      key: 'c',
      name: 'c',
      kind: 'task',
      seq: 2,
      status: 'succeeded',
      maxAttempts: 3,
      output: { x: [1, { y: 2 }] },
      turn: 4,
      finishedAttempt: { status: 'succeeded', worker: 'w1', startedAt: NOW - 5 },
    },
  ],
  [
    'failed in one write, the attempt with its own error',
    {
      key: 'd',
      name: 'd',
      kind: 'task',
      seq: 3,
      status: 'failed',
      maxAttempts: 1,
      error: { name: 'Error', message: 'boom' },
      turn: 5,
      finishedAttempt: { status: 'failed', worker: 'w2', startedAt: NOW - 1, error: { name: 'Error', message: 'boom', data: { n: 1 } } },
    },
  ],
  [
    'retry_wait in one write',
    {
      key: 'e',
      name: 'e',
      kind: 'task',
      seq: 4,
      status: 'retry_wait',
      maxAttempts: 3,
      wakeAt: NOW + 1000,
      finishedAttempt: { status: 'failed', worker: 'w1', startedAt: NOW, error: { name: 'E', message: 'm' } },
    },
  ],
  ['queued, scheduled, no attempt', { key: 'f', name: 'f', kind: 'task', seq: 5, status: 'scheduled', maxAttempts: 2, queued: true, wakeAt: NOW + 30_000 }],
  ['a child, waiting', { key: 'g', name: 'g', kind: 'child', seq: 6, status: 'waiting', maxAttempts: 1, childRunId: 'child-1' }],
  ['a repeated name', { key: 'h#2', name: 'h', kind: 'sleep', seq: 7, status: 'waiting', maxAttempts: 1, wakeAt: NOW + 5 }],
];

describe('memory store: steps kept compactly, records as before', () => {
  it('insert and load return what newStepRecord builds, keys in the same order, for every kind of insert', async () => {
    const store = createMemoryStore();
    const fence = await runOn(store, 'r1');
    for (const [what, step] of inserts) {
      const { step: written, created } = await store.steps.insert('r1', fence, step, NOW);
      assert.equal(created, true, what);
      const expected = newStepRecord('r1', step, NOW, fence);
      assert.deepEqual(written, expected, what);
      assert.deepEqual(Object.keys(written), Object.keys(expected), what);
      const again = await store.steps.insert('r1', fence, step, NOW + 1);
      assert.equal(again.created, false);
      assert.deepEqual(again.step, expected, what);
    }
    const loaded = await store.steps.load('r1');
    assert.deepEqual(
      loaded,
      inserts.map(([, step]) => newStepRecord('r1', step, NOW, fence)),
    );
  });

  it('the history holds attempt 1 as each insert wrote it, and the transitions that followed', async () => {
    const store = createMemoryStore();
    const fence = await runOn(store, 'r2');
    for (const [, step] of inserts) await store.steps.insert('r2', fence, step, NOW);
    // Attempt 1 of `a` fails, attempt 2 runs; `f`'s step worker opens its attempt 1.
    await store.steps.transition(
      'r2',
      fence,
      {
        key: 'a',
        from: { status: ['running'], attempt: 1 },
        to: { status: 'running', attempt: 2 },
        endAttempt: { status: 'failed', error: { name: 'E', message: 'x' } },
        startAttempt: { worker: 'w3' },
      },
      NOW + 10,
    );
    await store.steps.transition(
      'r2',
      fence,
      { key: 'f', from: { status: ['scheduled'], attempt: 1 }, to: { status: 'running' }, startAttempt: { worker: 'w4' } },
      NOW + 20,
    );
    await store.steps.transition(
      'r2',
      fence,
      {
        key: 'f',
        from: { status: ['running'], attempt: 1 },
        to: { status: 'succeeded', output: 7, turn: 9, wakeAt: null },
        endAttempt: { status: 'succeeded', output: 7 },
      },
      NOW + 30,
    );
    const history = await store.history.list('r2');
    assert.deepEqual(history, [
      { runId: 'r2', stepKey: 'c', attempt: 1, status: 'succeeded', worker: 'w1', startedAt: NOW - 5, endedAt: NOW },
      {
        runId: 'r2',
        stepKey: 'd',
        attempt: 1,
        status: 'failed',
        worker: 'w2',
        startedAt: NOW - 1,
        endedAt: NOW,
        error: { name: 'Error', message: 'boom', data: { n: 1 } },
      },
      { runId: 'r2', stepKey: 'a', attempt: 1, status: 'failed', worker: 'w1', startedAt: NOW, endedAt: NOW + 10, error: { name: 'E', message: 'x' } },
      { runId: 'r2', stepKey: 'b', attempt: 1, status: 'running', startedAt: NOW },
      { runId: 'r2', stepKey: 'e', attempt: 1, status: 'failed', worker: 'w1', startedAt: NOW, endedAt: NOW, error: { name: 'E', message: 'm' } },
      { runId: 'r2', stepKey: 'a', attempt: 2, status: 'running', worker: 'w3', startedAt: NOW + 10 },
      { runId: 'r2', stepKey: 'f', attempt: 1, status: 'succeeded', worker: 'w4', startedAt: NOW + 20, endedAt: NOW + 30, output: 7 },
    ]);
    const [a, , , , , f] = await store.steps.load('r2');
    assert.deepEqual(a, { ...newStepRecord('r2', inserts[0]![1], NOW, fence), attempt: 2, updatedAt: NOW + 10 });
    const { wakeAt: _cleared, ...scheduled } = newStepRecord('r2', inserts[5]![1], NOW, fence);
    assert.deepEqual(f, { ...scheduled, status: 'succeeded', updatedAt: NOW + 30, output: 7, turn: 9 });
    assert.equal('wakeAt' in (f as object), false, 'a cleared wakeAt is absent, not undefined');
  });

  it('attempts that tie on start, step position and number are listed in the order they were opened', async () => {
    const store = createMemoryStore();
    const fence = await runOn(store, 'r3');
    // `x` is recorded first but opens its attempt after `x:compensate` (same seq, same instant).
    await store.steps.insert('r3', fence, { key: 'x', name: 'x', kind: 'task', seq: 0, status: 'scheduled', maxAttempts: 1, queued: true }, NOW);
    await store.steps.insert(
      'r3',
      fence,
      { key: 'x:compensate', name: 'x:compensate', kind: 'task', seq: 0, status: 'running', maxAttempts: 1, worker: 'w1' },
      NOW,
    );
    await store.steps.transition(
      'r3',
      fence,
      { key: 'x', from: { status: ['scheduled'], attempt: 1 }, to: { status: 'running' }, startAttempt: { worker: 'w2' } },
      NOW,
    );
    assert.deepEqual(
      (await store.history.list('r3')).map((a) => a.stepKey),
      ['x:compensate', 'x'],
    );
  });

  it('what it returns is the caller’s to change: the store keeps its own copies', async () => {
    const store = createMemoryStore();
    const fence = await runOn(store, 'r4');
    const step = inserts[3]![1];
    const { step: written } = await store.steps.insert('r4', fence, step, NOW);
    (written.error as { message: string }).message = 'changed';
    const [history] = await store.history.list('r4');
    assert.ok(history?.error);
    (history.error.data as { n: number }).n = 99;
    assert.deepEqual((await store.steps.load('r4'))[0], newStepRecord('r4', step, NOW, fence));
    assert.deepEqual((await store.history.list('r4'))[0]?.error, { name: 'Error', message: 'boom', data: { n: 1 } });
  });
});

describe('memory store: bytes kept per finished run (issue 18)', () => {
  it('a finished 1-step run keeps under 1,200 bytes and a 100-step run under 300 bytes per step (were ~2,300 and ~435)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const steps = defineWorkflow('kept-bytes', async (ctx, n: number) => {
      for (let i = 0; i < n; i++) await ctx.step(`s${i}`, () => undefined);
      return n;
    });
    // What the store keeps per finished run, not the engine's cache of suspended executions
    // (decision 64, bounded and tested on its own): with it on, a first measurement here read
    // ~1,230 bytes now and then (a 1-step run is never kept; not yet explained), ~990 without.
    const engine = inlineMemoryEngine([steps], { stickyExecutions: false });
    await engine.start({ workers: false });
    try {
      const keptPerRun = async (n: number, runs: number): Promise<number> => {
        for (let i = 0; i < 50; i++) await (await engine.startRun(steps, n)).result();
        gc();
        gc();
        const before = process.memoryUsage().heapUsed;
        for (let i = 0; i < runs; i++) await (await engine.startRun(steps, n)).result();
        // What is still on its way out when the last result() resolves (completion signals, a
        // run's last writes) is not kept: on a loaded machine more of it is in flight at that
        // moment (CI read 1,206 and 1,291 where an idle run reads ~1,075). So the heap is read until
        // it stops shrinking, and what stays is what the store keeps.
        let after = Number.POSITIVE_INFINITY;
        for (let i = 0; i < 20; i++) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          gc();
          gc();
          const now = process.memoryUsage().heapUsed;
          const shrank = now < after - 1024;
          after = Math.min(after, now);
          if (!shrank) break;
        }
        return (after - before) / runs;
      };
      const one = await keptPerRun(1, 2000);
      const hundred = await keptPerRun(100, 100);
      assert.ok(one < 1200, `bytes per finished 1-step run: ${one.toFixed(0)}`);
      assert.ok(hundred / 100 < 300, `bytes per step of a finished 100-step run: ${(hundred / 100).toFixed(0)}`);
    } finally {
      await engine.stop();
    }
  });
});
