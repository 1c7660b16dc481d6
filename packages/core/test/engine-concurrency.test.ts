import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Json, type RunRecord, createLocalQueue, defineWorkflow } from '@cairn/core';
import type { NewStep } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';
import {
  type Fixture,
  countingStore,
  createFixture,
  gate,
  rejectsWithCode,
  turns,
  until,
  waitForIdle,
  waitForQuiet,
  waitForStatus,
  waitForStep,
} from './helpers/engine-fixture.js';

const ORCHESTRATOR = (workflow: string) => `wf-orchestrator-${workflow}`;
const STEP_QUEUE = (workflow: string) => `wf-step-${workflow}`;

describe('concurrency: many workers, one run', () => {
  it('8 workers (engines with distinct ids over one store) race for one run: one claim wins, each body runs once', async (t) => {
    const clock = new ManualClock();
    const counter = countingStore();
    const queue = createLocalQueue({ clock });
    const bodies = new Map<string, string[]>();
    const body = (key: string) => (s: { key: string }) => {
      bodies.set(key, [...(bodies.get(key) ?? []), s.key]);
      return key;
    };
    const wf = defineWorkflow('race', async (ctx) => {
      const out = [await ctx.step('a', body('a')), await ctx.step('b', body('b'))];
      await ctx.sleep('nap', 1000);
      out.push(await ctx.step('c', body('c'), { queued: true }), await ctx.step('d', body('d')));
      return out;
    });
    const engines: Fixture[] = [];
    try {
      for (let i = 0; i < 8; i++) engines.push(await createFixture({ workflows: [wf], clock, counter, queue, workerId: `w${i}`, concurrency: 1 }));
      // A starter with its own idle queue creates the run, so the race below starts from nothing.
      const starter = await createFixture({ workflows: [wf], clock, counter, workerId: 'starter', start: false });
      const h = await starter.engine.startRun(wf, null);
      await starter.engine.stop();
      counter.reset();
      // Eight deliveries at once, one per worker (the local queue serves workers in rotation).
      for (let i = 0; i < 8; i++) void queue.send(ORCHESTRATOR('race'), { runId: h.id });
      await waitForIdle(counter.inner, h.id);
      const claims = counter.calls.filter((c) => c.method === 'runs.claim');
      assert.equal(claims.length, 8, 'every worker tried');
      assert.deepEqual(new Set(claims.map((c) => c.args[1])).size, 8, 'from 8 distinct workers');
      const winners = claims.filter((c) => c.outcome?.ok && c.outcome.value !== undefined);
      assert.equal(winners.length, 1, 'exactly one claim succeeded');
      t.diagnostic(`winner: ${winners[0]!.args[1]}`);
      // Eight deliveries again after the timer; the queued step's job is delivered eight times too.
      counter.intercept('steps.insert', async (original, runId: string, fence, step: NewStep, now) => {
        const result = await original(runId, fence, step, now);
        if (step.status === 'scheduled') {
          for (let i = 0; i < 8; i++) void queue.send(STEP_QUEUE('race'), { runId, workflow: 'race', key: step.key, attempt: 1 });
        }
        return result;
      });
      await clock.advance(1000);
      for (let i = 0; i < 8; i++) void queue.send(ORCHESTRATOR('race'), { runId: h.id });
      await waitForStatus(counter.inner, h.id, 'completed');
      assert.deepEqual((await counter.inner.runs.get(h.id))!.output, ['a', 'b', 'c', 'd']);
      assert.deepEqual(Object.fromEntries(bodies), { a: ['a'], b: ['b'], c: ['c'], d: ['d'] });
      const history = await engines[0]!.engine.history(h.id);
      assert.deepEqual(
        history.map((a) => [a.stepKey, a.attempt, a.status]),
        [
          ['a', 1, 'succeeded'],
          ['b', 1, 'succeeded'],
          ['c', 1, 'succeeded'],
          ['d', 1, 'succeeded'],
        ],
      );
    } finally {
      for (const e of engines) await e.engine.stop();
      await queue.close();
    }
  });

  it('8 workers over 20 runs with every job delivered several times: each step body runs exactly once per run', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const queue = createLocalQueue({ clock });
    const bodies = new Map<string, number>();
    const count = (runId: string, key: string) => bodies.set(`${runId}/${key}`, (bodies.get(`${runId}/${key}`) ?? 0) + 1);
    const wf = defineWorkflow('many', async (ctx, input: { i: number }) => {
      const a = await ctx.step('a', () => (count(ctx.runId, 'a'), input.i));
      const [b, c] = await Promise.all([
        ctx.step('b', () => (count(ctx.runId, 'b'), a + 1), { queued: true }),
        ctx.step('c', () => (count(ctx.runId, 'c'), a + 2)),
      ]);
      await ctx.sleep('nap', 100);
      return ctx.step('d', () => (count(ctx.runId, 'd'), a + b + c));
    });
    // Every send is delivered three times (what an at-least-once queue may do).
    const dup = {
      ...queue,
      name: queue.name,
      capabilities: queue.capabilities,
      work: queue.work.bind(queue),
      close: queue.close.bind(queue),
      async send(name: string, payload: Json, options?: object) {
        const { dedupeKey: _drop, ...rest } = (options ?? {}) as { dedupeKey?: string };
        for (let i = 0; i < 3; i++) await queue.send(name, payload, rest);
      },
    };
    const engines: Fixture[] = [];
    try {
      for (let i = 0; i < 8; i++) engines.push(await createFixture({ workflows: [wf], clock, counter, queue: dup, workerId: `w${i}`, concurrency: 2 }));
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push((await engines[i % 8]!.engine.startRun(wf, { i })).id);
      for (const id of ids) await waitForIdle(counter.inner, id);
      await clock.advance(100);
      for (const id of ids) await waitForStatus(counter.inner, id, 'completed');
      for (let i = 0; i < 20; i++) {
        assert.equal((await counter.inner.runs.get(ids[i]!))!.output, i + i + 1 + i + 2);
        for (const key of ['a', 'b', 'c', 'd']) assert.equal(bodies.get(`${ids[i]}/${key}`), 1, `run ${i} step ${key}`);
      }
    } finally {
      for (const e of engines) await e.engine.stop();
      await queue.close();
    }
  });
});

describe('concurrency: fencing', () => {
  it('a worker whose lease was taken over cannot write: step insert/transition, state, run transition and renew throw LEASE_LOST and change nothing', async () => {
    const wf = defineWorkflow('fenced', async (ctx) => {
      await ctx.step('first', () => 1);
      await ctx.sleep('nap', 10_000);
    });
    const fx = await createFixture({ workflows: [wf], timings: { leaseMs: 1000 } });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      const store = fx.inner;
      const a = (await store.runs.claim(h.id, 'A', 1000, fx.clock.now()))!;
      assert.ok(a, 'A claims');
      assert.equal(await store.runs.claim(h.id, 'B', 1000, fx.clock.now()), undefined, 'B cannot while A’s lease is live');
      await fx.clock.advance(1001);
      const b = (await store.runs.claim(h.id, 'B', 1000, fx.clock.now()))!;
      assert.ok(b, 'B takes over the expired lease');
      assert.ok(b.fence > a.fence);
      const snapshot = async () => ({
        run: await store.runs.get(h.id),
        steps: await store.steps.load(h.id),
        history: await store.history.list(h.id),
        state: await store.state.get(h.id),
      });
      const before = await snapshot();
      const now = fx.clock.now();
      await rejectsWithCode(
        store.steps.insert(h.id, a.fence, { key: 'x', name: 'x', kind: 'task', seq: 2, status: 'running', maxAttempts: 1, worker: 'A' }, now),
        'LEASE_LOST',
      );
      await rejectsWithCode(
        store.steps.transition(h.id, a.fence, { key: 'nap', from: { status: ['waiting'], attempt: 1 }, to: { status: 'succeeded' } }, now),
        'LEASE_LOST',
      );
      await rejectsWithCode(store.state.set(h.id, a.fence, 'k', 'v', now), 'LEASE_LOST');
      await rejectsWithCode(store.runs.transition(h.id, a.fence, { from: ['running'], to: 'completed', output: 'A' }, now), 'LEASE_LOST');
      await rejectsWithCode(store.runs.renew(h.id, a.fence, 1000, now), 'LEASE_LOST');
      assert.deepEqual(await snapshot(), before, 'nothing changed');
      // B's token works.
      await store.runs.transition(h.id, b.fence, { from: ['running'], to: 'waiting', wakeAt: now }, now);
    } finally {
      await fx.engine.stop();
    }
  });

  it('an engine paused past its lease loses the run: its late step result is refused and the new owner finishes the run', async () => {
    const clock = new ManualClock();
    const inner = countingStore().inner;
    const counterA = countingStore(inner);
    const counterB = countingStore(inner);
    const release = gate();
    const inFirst = gate();
    const bodies: string[] = [];
    const wf = defineWorkflow('takeover', async (ctx) => {
      const a = await ctx.step('a', async (s) => {
        bodies.push(`a#${s.attempt}`);
        if (s.attempt === 1) {
          inFirst.open();
          await release.promise; // A is stuck here (a long GC pause, a hung call) and ignores its signal
        }
        return `attempt-${s.attempt}`;
      });
      const b = await ctx.step('b', () => (bodies.push('b'), 'b'));
      return [a, b];
    });
    const timings = { leaseMs: 3000 };
    // A's renewals hang, as they would in a paused process.
    counterA.intercept('runs.renew', () => new Promise(() => {}));
    const A = await createFixture({ workflows: [wf], clock, counter: counterA, workerId: 'A', timings });
    const B = await createFixture({ workflows: [wf], clock, counter: counterB, workerId: 'B', timings });
    try {
      const h = await A.engine.startRun(wf, null);
      await inFirst.promise;
      const fenceA = (await inner.runs.get(h.id))!.fence;
      await clock.advance(3001);
      assert.equal(await B.engine.recover(), 1, 'the expired lease is due');
      const done = await waitForStatus(inner, h.id, 'completed');
      assert.deepEqual(done.output, ['attempt-2', 'b']);
      const before = { run: await inner.runs.get(h.id), steps: await inner.steps.load(h.id), history: await inner.history.list(h.id) };
      // A wakes up and tries to record its result.
      counterA.reset();
      release.open();
      await until(() => counterA.calls.some((c) => c.method === 'steps.transition' && c.outcome !== undefined), 'A tries to write');
      await turns(20);
      const writes = counterA.calls.filter((c) => c.method !== 'runs.get' && c.method !== 'steps.load');
      assert.ok(writes.length > 0);
      for (const w of writes) {
        assert.equal(w.outcome?.ok, false, `${w.method} by A must be refused`);
        assert.equal((w.outcome as { error: { code: string } }).error.code, 'LEASE_LOST', w.method);
        assert.equal(w.args[1] as number, fenceA, 'A wrote with its old token');
      }
      assert.deepEqual({ run: await inner.runs.get(h.id), steps: await inner.steps.load(h.id), history: await inner.history.list(h.id) }, before);
      assert.deepEqual(bodies, ['a#1', 'a#2', 'b']);
      assert.deepEqual(
        before.history.map((a) => [a.stepKey, a.attempt, a.status, a.worker]),
        [
          ['a', 1, 'abandoned', 'A'],
          ['a', 2, 'succeeded', 'B'],
          ['b', 1, 'succeeded', 'B'],
        ],
      );
    } finally {
      await A.engine.stop().catch(() => {});
      await B.engine.stop();
    }
  });
});

describe('concurrency: fencing between steps', () => {
  it('an engine paused between two steps past its lease cannot record the next step when it resumes', async () => {
    const clock = new ManualClock();
    const inner = countingStore().inner;
    const counterA = countingStore(inner);
    const counterB = countingStore(inner);
    counterA.intercept('runs.renew', () => new Promise(() => {})); // A is paused: no renewals
    // The n-th execution to reach the pause point waits on pauses[n].
    const pauses = [gate(), gate()];
    const arrived = [gate(), gate()];
    let arrivals = 0;
    const bodies: string[] = [];
    const wf = defineWorkflow('paused-between', async (ctx) => {
      await ctx.step('a', () => void bodies.push('a'));
      const n = arrivals++;
      arrived[n]?.open();
      await pauses[n]?.promise;
      return ctx.step('b', () => (bodies.push('b'), 'b'));
    });
    const timings = { leaseMs: 3000 };
    const A = await createFixture({ workflows: [wf], clock, counter: counterA, workerId: 'A', timings });
    const B = await createFixture({ workflows: [wf], clock, counter: counterB, workerId: 'B', timings });
    try {
      const h = await A.engine.startRun(wf, null);
      await arrived[0]!.promise;
      await clock.advance(3001);
      assert.equal(await B.engine.recover(), 1);
      await arrived[1]!.promise; // B replayed `a` and waits at the same point
      counterA.reset();
      pauses[0]!.open(); // A resumes first and asks for step b
      await until(() => counterA.calls.some((c) => c.outcome !== undefined && c.method !== 'runs.renew'), 'A writes');
      await turns(20);
      const refused = counterA.calls.filter((c) => c.method === 'steps.insert');
      assert.equal(refused.length, 1);
      assert.equal(refused[0]!.outcome?.ok, false);
      assert.equal((refused[0]!.outcome as { error: { code: string } }).error.code, 'LEASE_LOST');
      assert.deepEqual(await inner.steps.load(h.id).then((steps) => steps.map((s) => s.key)), ['a'], 'A recorded nothing');
      assert.deepEqual(bodies, ['a']);
      pauses[1]!.open();
      const run = await waitForStatus(inner, h.id, 'completed');
      assert.equal(run.output, 'b');
      assert.deepEqual(bodies, ['a', 'b']);
      assert.deepEqual(
        (await inner.history.list(h.id)).map((a) => [a.stepKey, a.worker, a.status]),
        [
          ['a', 'A', 'succeeded'],
          ['b', 'B', 'succeeded'],
        ],
      );
    } finally {
      await A.engine.stop();
      await B.engine.stop();
    }
  });
});

describe('concurrency: duplicate delivery', () => {
  it('the same orchestrator job delivered many times at once executes each step once', async () => {
    const clock = new ManualClock();
    const queue = createLocalQueue({ clock });
    const bodies: string[] = [];
    const wf = defineWorkflow('dupes', async (ctx) => {
      const x = await ctx.step('x', () => (bodies.push('x'), 1));
      await ctx.sleep('nap', 500);
      const y = await ctx.step('y', () => (bodies.push('y'), 2), { queued: true });
      return x + y;
    });
    const fx = await createFixture({ workflows: [wf], clock, queue });
    try {
      // Every scheduled step's job is delivered five times, at the same moment.
      fx.counter.intercept('steps.insert', async (original, runId: string, fence, step: NewStep, now) => {
        const result = await original(runId, fence, step, now);
        if (step.status === 'scheduled')
          for (let i = 0; i < 5; i++) void queue.send(STEP_QUEUE('dupes'), { runId, workflow: 'dupes', key: step.key, attempt: 1 });
        return result;
      });
      const h = await fx.engine.startRun(wf, null, { mode: 'queued' });
      for (let i = 0; i < 5; i++) void queue.send(ORCHESTRATOR('dupes'), { runId: h.id });
      await waitForIdle(fx.inner, h.id);
      await clock.advance(500);
      for (let i = 0; i < 5; i++) void queue.send(ORCHESTRATOR('dupes'), { runId: h.id });
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 3);
      assert.deepEqual(bodies, ['x', 'y']);
      const history = await fx.engine.history(h.id);
      assert.deepEqual(
        history.map((a) => [a.stepKey, a.attempt, a.status]),
        [
          ['x', 1, 'succeeded'],
          ['y', 1, 'succeeded'],
        ],
      );
    } finally {
      await fx.engine.stop();
      await queue.close();
    }
  });

  it('a stale step job (an attempt that was already superseded) does nothing', async () => {
    const clock = new ManualClock();
    const queue = createLocalQueue({ clock });
    let calls = 0;
    const wf = defineWorkflow('stale', async (ctx) =>
      ctx.step(
        'q',
        () => {
          if (++calls === 1) throw new Error('first attempt fails');
          return 'ok';
        },
        { queued: true, retries: 1, backoff: { type: 'fixed', delay: 100 } },
      ),
    );
    const fx = await createFixture({ workflows: [wf], clock, queue });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForStep(fx.inner, h.id, 'q', 'retry_wait');
      await waitForQuiet(fx.counter, h.id);
      // Re-deliver attempt 1 while the step waits for attempt 2: it must not run the body.
      await queue.send(STEP_QUEUE('stale'), { runId: h.id, workflow: 'stale', key: 'q', attempt: 1 });
      await waitForQuiet(fx.counter, h.id);
      assert.equal(calls, 1);
      await clock.advance(100);
      await waitForStatus(fx.inner, h.id, 'completed');
      // And once more after the run ended.
      await queue.send(STEP_QUEUE('stale'), { runId: h.id, workflow: 'stale', key: 'q', attempt: 2 });
      await waitForQuiet(fx.counter, h.id);
      assert.equal(calls, 2);
      assert.equal(await h.result(), 'ok');
      assert.equal(((await fx.inner.runs.get(h.id)) as RunRecord).status, 'completed');
    } finally {
      await fx.engine.stop();
      await queue.close();
    }
  });
});
