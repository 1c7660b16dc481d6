// Kept executions (decision 64, issue 30): a suspended execution stays in the process that ran it
// and the run's next claim resumes it where it stopped, without reading or replaying its history;
// any other claim in between makes the run replay, and the cache stays within its bounds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import { createFixture, until, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

/** `n` steps, then `waits` event waits; returns the payloads and how many times its code started. */
function waiter(name: string, n: number, waits: number, starts: { count: number }) {
  return defineWorkflow(name, async (ctx) => {
    starts.count += 1;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += await ctx.step(`s${i}`, () => i);
    const got: unknown[] = [];
    for (let i = 0; i < waits; i++) got.push(await ctx.waitForEvent('poke'));
    return { sum, got };
  });
}

describe('kept executions', () => {
  const wakeCalls = new Map<number, Record<string, number>>();
  for (const n of [10, 1000]) {
    it(`a wake of a run suspended after ${n} steps resumes its execution: no step read, the same store calls at every length`, async () => {
      const starts = { count: 0 };
      const wf = waiter(`kept-${n}`, n, 2, starts);
      const fx = await createFixture({ workflows: [wf] });
      try {
        const h = await fx.engine.startRun(wf, null);
        await waitForIdle(fx.inner, h.id);
        assert.equal(fx.engine.keptExecutions.executions, 1);
        fx.counter.reset();
        await fx.engine.sendEvent(h.id, 'poke', 1);
        await until(async () => (await fx.inner.steps.load(h.id)).filter((s) => s.kind === 'event').length === 2, 'second wait recorded');
        await waitForIdle(fx.inner, h.id);
        const calls = fx.counter.counts();
        wakeCalls.set(n, calls);
        assert.equal(calls['steps.load'], undefined, `no step read: ${JSON.stringify(calls)}`);
        await fx.engine.sendEvent(h.id, 'poke', 2);
        await waitForStatus(fx.inner, h.id, 'completed');
        assert.deepEqual(await h.result(), { sum: (n * (n - 1)) / 2, got: [1, 2] });
        assert.equal(starts.count, 1, 'the code started once: both wakes resumed it');
        assert.equal(fx.engine.keptExecutions.executions, 0, 'a run that ended keeps nothing');
      } finally {
        await fx.engine.stop();
      }
    });
  }

  it('the wake costs the same store calls at 1,000 steps as at 10', () => {
    assert.equal(wakeCalls.size, 2);
    const [a, b] = [...wakeCalls.values()];
    assert.deepEqual(b, a);
  });

  it('a claim by another worker in between makes the run replay on both workers, with the right outcome', async () => {
    const starts = { count: 0 };
    const wf = waiter('kept-handover', 5, 3, starts);
    const a = await createFixture({ workflows: [wf], workerId: 'a' });
    // b shares a's store and clock but not its local queue: it takes only what its own recovery pass finds.
    const b = await createFixture({ workflows: [wf], workerId: 'b', counter: a.counter, clock: a.clock });
    try {
      const h = await a.engine.startRun(wf, null, { mode: 'inline' });
      await waitForIdle(a.inner, h.id);
      assert.equal(a.engine.keptExecutions.executions, 1);
      // Worker b takes the next wake (the event written and the run made due in the store, found by
      // b's recovery pass): it has nothing kept, so it replays (one step read).
      a.counter.reset();
      await a.inner.events.deliver(h.id, 'poke', 1, a.clock.now());
      await a.inner.runs.wake(h.id, a.clock.now());
      await b.engine.recover();
      await until(async () => (await a.inner.steps.load(h.id)).filter((s) => s.kind === 'event').length === 2, 'b recorded the second wait');
      await waitForIdle(a.inner, h.id);
      assert.equal(a.counter.count('steps.load'), 1, 'b replayed');
      assert.equal(starts.count, 2);
      // Back on a: its kept execution is a claim behind, so it replays too.
      await b.engine.stop();
      a.counter.reset();
      await a.engine.sendEvent(h.id, 'poke', 2);
      await until(async () => (await a.inner.steps.load(h.id)).filter((s) => s.kind === 'event').length === 3, 'a recorded the third wait');
      await waitForIdle(a.inner, h.id);
      assert.equal(a.counter.count('steps.load'), 1, 'a replayed: its kept execution was stale');
      assert.equal(starts.count, 3);
      await a.engine.sendEvent(h.id, 'poke', 3);
      await waitForStatus(a.inner, h.id, 'completed');
      assert.deepEqual(await h.result(), { sum: 10, got: [1, 2, 3] });
      assert.equal(starts.count, 3, 'the last wake resumed the execution a kept after its replay');
    } finally {
      await a.engine.stop();
      await b.engine.stop();
    }
  });

  it('a run cancelled while its execution is kept replays and ends cancelled, dropping what was kept', async () => {
    const starts = { count: 0 };
    const wf = waiter('kept-cancel', 3, 1, starts);
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      assert.equal(fx.engine.keptExecutions.executions, 1);
      await fx.engine.cancel(h.id);
      await waitForStatus(fx.inner, h.id, 'cancelled');
      assert.equal(fx.engine.keptExecutions.executions, 0);
    } finally {
      await fx.engine.stop();
    }
  });

  it('stays within maxExecutions and maxCalls, dropping the least recently suspended; an execution larger than maxCalls is never kept', async () => {
    const starts = { count: 0 };
    const small = waiter('kept-small', 4, 2, starts); // 5 calls when suspended
    const big = waiter('kept-big', 30, 2, starts); // 31 calls
    const fx = await createFixture({ workflows: [small, big], stickyExecutions: { maxExecutions: 3, maxCalls: 12 } });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const h = await fx.engine.startRun(small, null);
        await waitForIdle(fx.inner, h.id);
        ids.push(h.id);
        const kept = fx.engine.keptExecutions;
        assert.ok(kept.executions <= 3 && kept.calls <= 12, `within bounds after run ${i}: ${JSON.stringify(kept)}`);
      }
      // 5 calls each: two fit in 12.
      assert.deepEqual(fx.engine.keptExecutions, { executions: 2, calls: 10 });
      const h = await fx.engine.startRun(big, null);
      await waitForIdle(fx.inner, h.id);
      assert.deepEqual(fx.engine.keptExecutions, { executions: 2, calls: 10 }, 'the 31-call execution was not kept');
      // The newest two are kept: their wakes resume; the oldest replays. Every run ends right.
      const before = starts.count;
      for (const id of ids) await fx.engine.sendEvent(id, 'poke', id);
      await fx.engine.sendEvent(h.id, 'poke', 'big');
      for (const id of [...ids, h.id])
        await until(async () => (await fx.inner.steps.load(id)).filter((s) => s.kind === 'event').length === 2, `${id} waits again`);
      for (const id of [...ids, h.id]) await waitForIdle(fx.inner, id);
      assert.equal(starts.count - before, 5, 'four small runs and the big one replayed; the two kept resumed');
      assert.ok(fx.engine.keptExecutions.calls <= 12);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a run whose saga waits for a compensation retry, another branch waiting for an event, is not kept: the wake replays and the saga ends', async () => {
    let undoTries = 0;
    const starts = { count: 0 };
    const wf = defineWorkflow('kept-saga', async (ctx) => {
      starts.count += 1;
      await ctx.step('book', () => 'booked', {
        retries: 1,
        backoff: { type: 'fixed', delay: '1m' },
        compensate: () => {
          undoTries += 1;
          if (undoTries === 1) throw new Error('undo failed once');
        },
      });
      await Promise.all([
        ctx.waitForEvent('never'),
        ctx.step('boom', () => {
          throw new Error('boom');
        }),
      ]);
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      assert.equal(undoTries, 1, 'the compensation failed once and waits for its retry');
      assert.equal(fx.engine.keptExecutions.executions, 0, 'a saga waiting for a retry is not kept');
      await fx.clock.advance(60_000);
      const run = await waitForStatus(fx.inner, h.id, 'failed');
      assert.equal(undoTries, 2, 'the retry ran');
      assert.match(run.error?.message ?? '', /boom/);
      assert.equal(starts.count, 2, 'the wake replayed to the failure and went on with the saga');
    } finally {
      await fx.engine.stop();
    }
  });

  it('refuses a malformed stickyExecutions option with INVALID_INPUT', () => {
    const store = createMemoryStore();
    for (const bad of [true, { maxExecutions: 0 }, { maxCalls: 1.5 }, { evict: 'sometimes' }, { other: 1 }]) {
      assert.throws(
        () => createEngine({ store, workflows: [], stickyExecutions: bad as never }),
        (error: Error & { code?: string }) => error.code === 'INVALID_INPUT',
        JSON.stringify(bad),
      );
    }
  });
});
