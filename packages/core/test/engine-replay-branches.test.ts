// Concurrent branches replay exactly: whatever order step bodies completed in on the first
// execution, a replay hands every call its own recorded outcome (issue 13, finding 1).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineWorkflow } from '@cairn/core';
import { createFixture, turns, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

// Cases with real timers (setTimeout inside workflow code) wait this many event-loop turns at most:
// a bound on turns, not on time, that a 2-5 ms timer cannot outlast even when the machine is busy.
const REAL_TIMER_TURNS = 2_000_000;
describe('replay of concurrent branches', () => {
  it('a fan-out of two-step branches whose first steps finish in reverse order returns each branch its own result after a replay', async () => {
    const ids = ['a', 'b', 'c'];
    const ran: string[] = [];
    const wf = defineWorkflow('fan-out', async (ctx) => {
      const saved = await Promise.all(
        ids.map(async (id, i) => {
          const fetched = await ctx.step('fetch', async () => {
            await turns(3 * (ids.length - i)); // c finishes first, a last
            ran.push(`fetch-${id}`);
            return `fetched-${id}`;
          });
          return ctx.step('save', () => (ran.push(`save-${id}`), `saved-${fetched}`));
        }),
      );
      await ctx.sleep('then', 1000);
      const now = await Promise.all(
        ids.map(async (id) => `${await ctx.step('tag', async () => (await turns(ids.indexOf(id) === 0 ? 6 : 1), id))}:${await ctx.now()}`),
      );
      return { saved, now: now.map((s) => s.split(':')[0]) };
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      await fx.clock.advance(1000);
      await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      const run = await fx.inner.runs.get(h.id);
      assert.equal(run?.status, 'completed', JSON.stringify(run?.error));
      assert.deepEqual(run?.output, { saved: ['saved-fetched-a', 'saved-fetched-b', 'saved-fetched-c'], now: ['a', 'b', 'c'] });
      assert.deepEqual(ran.filter((r) => r.startsWith('save')).sort(), ['save-a', 'save-b', 'save-c']);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a call made after awaiting a timer while another branch is in flight fails with NON_DETERMINISM and records nothing for it', async () => {
    const wf = defineWorkflow('stray', async (ctx) => {
      // Still running when the timer below fires: it ends only when the run's end aborts it.
      const slow = ctx.step('slow', ({ signal }) => new Promise<number>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))));
      const stray = (async () => {
        // Not primitives. The macrotask hops come first so that the timer fires after the engine
        // saw the code go quiet (its check is itself a macrotask): on a loaded machine a bare 5 ms
        // timer could fire before that check, inside the first turn, where the call is legitimate.
        for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
        await new Promise<void>((resolve) => setTimeout(resolve, 5));
        return ctx.step('after-timer', () => 2);
      })();
      return Promise.all([slow, stray]);
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      // A real timer inside the run: on a loaded machine it can outlast the default turn budget.
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed'], REAL_TIMER_TURNS);
      assert.equal(run.status, 'failed');
      assert.equal(run.error?.code, 'NON_DETERMINISM');
      assert.match(run.error?.message ?? '', /Move that asynchronous work into a ctx\.step/);
      // Nothing at all: `slow` never finished, and an inline step is recorded once finished (its
      // start only when its body outlasts `recordStartAfterMs`, which the clock never reached).
      assert.deepEqual(
        (await fx.inner.steps.load(h.id)).map((s) => s.key),
        [],
      );
    } finally {
      await fx.engine.stop();
    }
  });

  it('sequential code may await a timer between primitives (nothing else is in flight), and replays', async () => {
    const wf = defineWorkflow('stray-sequential', async (ctx) => {
      const a = await ctx.step('a', () => 1);
      await new Promise<void>((resolve) => setTimeout(resolve, 2));
      const b = await ctx.step('b', () => 2);
      await ctx.sleep('nap', 1000);
      await new Promise<void>((resolve) => setTimeout(resolve, 2));
      return a + b + (await ctx.step('c', () => 3));
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id, REAL_TIMER_TURNS);
      await fx.clock.advance(1000);
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed'], REAL_TIMER_TURNS);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.equal(run.output, 6);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a replay that never makes a call the history delivered in a turn fails with NON_DETERMINISM instead of waiting for ever', async () => {
    const v1 = defineWorkflow('changed', async (ctx) => {
      const both = await Promise.all([ctx.step('a', async () => (await turns(6), 'a')), ctx.step('b', () => 'b')]);
      await ctx.sleep('nap', 1000);
      return both;
    });
    // The same name and version with a branch removed: 'b' is never called on replay.
    const v2 = defineWorkflow('changed', async (ctx) => {
      const only = await Promise.all([ctx.step('a', async () => 'a')]);
      await ctx.sleep('nap', 1000);
      return only;
    });
    const first = await createFixture({ workflows: [v1] });
    let second: Awaited<ReturnType<typeof createFixture>> | undefined;
    try {
      const h = await first.engine.startRun(v1, null);
      await waitForIdle(first.inner, h.id);
      await first.engine.stop();
      second = await createFixture({ workflows: [v2], clock: first.clock, counter: first.counter });
      await first.clock.advance(1000);
      await second.engine.recover();
      const run = await waitForStatus(first.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'failed');
      assert.equal(run.error?.code, 'NON_DETERMINISM');
      assert.match(run.error?.message ?? '', /never called it/);
    } finally {
      await second?.engine.stop();
    }
  });
});
