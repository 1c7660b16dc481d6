// Store round trips are counted, not assumed: an inline step costs one write (recorded once,
// finished, with its attempt) and no read, and a replay reads the run's steps once however long
// the run is.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineWorkflow } from '@cairn/core';
import type { NewStep, StepTransition } from '@cairn/core/backend';
import { createFixture, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

function longWorkflow(n: number) {
  return defineWorkflow(`long-${n}`, async (ctx) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += await ctx.step(`s${i}`, () => i);
    await ctx.sleep('nap', 1000); // forces a replay of every step above
    return sum;
  });
}

describe('replay cost', () => {
  const replayTotals = new Map<number, Record<string, number>>();

  for (const n of [10, 100, 1000]) {
    it(`a run with ${n} recorded steps: 1 write per inline step, then a replay that reads its steps once`, async (t) => {
      const wf = longWorkflow(n);
      // About the replay: every wake replays (a kept execution would resume without one, decision 64).
      const fx = await createFixture({ workflows: [wf], stickyExecutions: false });
      try {
        fx.counter.reset();
        const h = await fx.engine.startRun(wf, null);
        await waitForIdle(fx.inner, h.id);
        const first = fx.counter.counts();
        assert.deepEqual(first, {
          'versions.get': 1, // the start reads its version's status: a retired version takes no new runs
          'runs.create': 1,
          'runs.claim': 1,
          'steps.load': 1,
          'steps.insert': n + 1, // every step (finished), and the sleep
          'runs.transition': 1, // running -> waiting
        });
        // Per step: exactly one insert, straight into `succeeded` with its finished attempt.
        for (let i = 0; i < n; i += Math.max(1, Math.floor(n / 10))) {
          const key = `s${i}`;
          const calls = fx.counter.calls.filter(
            (c) =>
              (c.method === 'steps.insert' && (c.args[2] as NewStep).key === key) ||
              (c.method === 'steps.transition' && (c.args[2] as StepTransition).key === key),
          );
          assert.deepEqual(
            calls.map((c) => c.method),
            ['steps.insert'],
            key,
          );
          assert.equal((calls[0]!.args[2] as NewStep).status, 'succeeded');
          assert.equal((calls[0]!.args[2] as NewStep).finishedAttempt?.status, 'succeeded');
        }
        const history = await fx.inner.history.list(h.id);
        assert.equal(history.filter((a) => a.status === 'succeeded').length, n, 'every attempt is in the history');

        fx.counter.reset();
        await fx.clock.advance(1000);
        await waitForStatus(fx.inner, h.id, 'completed');
        const replay = fx.counter.counts();
        t.diagnostic(`first execution: ${JSON.stringify(first)}; replay: ${JSON.stringify(replay)}`);
        assert.deepEqual(replay, {
          'runs.claim': 1,
          'steps.load': 1, // every step of the run, in one read
          'steps.transition': 1, // the sleep ends
          'runs.transition': 1, // running -> completed
        });
        assert.equal(fx.counter.count('steps.load'), fx.counter.count('runs.claim'), 'one load per execution');
        replayTotals.set(n, replay);
        assert.equal(await h.result(), (n * (n - 1)) / 2);
        assert.equal((await fx.inner.steps.load(h.id)).length, n + 1);
      } finally {
        await fx.engine.stop();
      }
    });
  }

  it('the cost of a replay does not grow with the length of the run', () => {
    assert.equal(replayTotals.size, 3);
    const [a, b, c] = [...replayTotals.values()];
    assert.deepEqual(a, b);
    assert.deepEqual(b, c);
  });

  it('a queued step costs one insert, the worker’s start and finish, the orchestrator’s turn stamp, and one read of the steps per execution', async () => {
    const wf = defineWorkflow('queued-cost', async (ctx) => {
      const a = await ctx.step('a', () => 1);
      return a + (await ctx.step('q', () => 2, { queued: true }));
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      fx.counter.reset();
      const h = await fx.engine.startRun(wf, null);
      await waitForStatus(fx.inner, h.id, 'completed');
      const writesFor = (key: string) =>
        fx.counter.calls
          .filter(
            (c) =>
              (c.method === 'steps.insert' && (c.args[2] as NewStep).key === key) ||
              (c.method === 'steps.transition' && (c.args[2] as StepTransition).key === key),
          )
          .map((c) => `${c.method}:${c.method === 'steps.insert' ? (c.args[2] as NewStep).status : (c.args[2] as StepTransition).to.status}`);
      assert.deepEqual(writesFor('a'), ['steps.insert:succeeded']);
      // The last write is the orchestrator recording the turn in which it hands the worker's result
      // to the code (decision 20): without it a later replay could hand it over at another point.
      assert.deepEqual(writesFor('q'), ['steps.insert:scheduled', 'steps.transition:running', 'steps.transition:succeeded', 'steps.transition:succeeded']);
      // Orchestrator executions (2) and the step worker (1) each read the steps once.
      assert.equal(fx.counter.count('runs.claim'), 2);
      assert.equal(fx.counter.count('steps.load'), 3);
    } finally {
      await fx.engine.stop();
    }
  });
});
