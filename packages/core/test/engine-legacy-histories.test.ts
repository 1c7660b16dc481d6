// Histories written before delivery turns were recorded (Cairn builds up to 69ed3f8) carry no
// `turn` on any step. A run suspended by such a build must resume under this one and end exactly as
// it would have (issue 27, part 6). The old build is emulated here by a store that drops every
// `turn` the engine writes; e2e/upgrade proves the same with the real packages of that build.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineEvent, defineWorkflow } from '@cairn/core';
import { createFixture, type EngineCounter, waitForIdle, waitForStatus, waitForStep } from './helpers/engine-fixture.js';

const paid = defineEvent<{ amount: number }>('paid');

/** Makes the store behave as a build before turns: no write carries a turn. */
function dropTurns(counter: EngineCounter): void {
  counter.intercept('steps.insert', (original, runId, fence, step, now) => {
    const { turn: _dropped, ...rest } = step as { turn?: number };
    return original(runId, fence, rest, now);
  });
  counter.intercept('steps.transition', (original, runId, fence, transition, now) => {
    const t = transition as { to: { turn?: number } };
    const { turn: _dropped, ...to } = t.to;
    return original(runId, fence, { ...t, to }, now);
  });
}

function restoreTurns(counter: EngineCounter): void {
  counter.intercept('steps.insert', undefined);
  counter.intercept('steps.transition', undefined);
}

describe('histories recorded before delivery turns', () => {
  it('a sequential run suspended on an event resumes, each step body run once', async () => {
    const ran: string[] = [];
    const wf = defineWorkflow('legacy-seq', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => (ran.push('reserve'), `r-${input.id}`));
      await ctx.setState('reserved', a);
      const b = await ctx.step('charge', () => (ran.push('charge'), `c-${a}`));
      const event = await ctx.waitForEvent(paid);
      const c = await ctx.step('ship', () => (ran.push('ship'), `s-${b}-${event.amount}`));
      return c;
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      dropTurns(fx.counter);
      const h = await fx.engine.startRun(wf, { id: 'o1' });
      await waitForIdle(fx.inner, h.id);
      assert.ok(
        (await fx.inner.steps.load(h.id)).every((s) => s.turn === undefined),
        'the emulated old build recorded no turn',
      );
      restoreTurns(fx.counter);
      await fx.engine.sendEvent(h.id, paid, { amount: 42 });
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.equal(run.output, 's-c-r-o1-42');
      assert.deepEqual(ran, ['reserve', 'charge', 'ship']);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a run suspended on a sleep after a fan-out resumes, each branch given its own recorded result', async () => {
    const ran: string[] = [];
    const wf = defineWorkflow('legacy-fan', async (ctx) => {
      const [x, y] = await Promise.all([ctx.step('x', () => (ran.push('x'), 'X')), ctx.step('y', () => (ran.push('y'), 'Y'))]);
      await ctx.sleep('pause', 1000);
      const z = await ctx.step('z', () => (ran.push('z'), `${x}${y}Z`));
      return z;
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      dropTurns(fx.counter);
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      restoreTurns(fx.counter);
      await fx.clock.advance(1000);
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.equal(run.output, 'XYZ');
      assert.deepEqual(ran.sort(), ['x', 'y', 'z']);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a queued step whose attempt was lost at the upgrade runs on a new worker after the legacy steps before it', async () => {
    const ran: string[] = [];
    let build = 'old';
    const wf = defineWorkflow('legacy-queued', async (ctx) => {
      const a = await ctx.step('a', () => (ran.push('a'), 'A'));
      const q = await ctx.step(
        'q',
        ({ signal }) => {
          ran.push(`q-${build}`);
          // Under the old build the worker dies mid-attempt (the engine stops under it).
          if (build === 'old') return new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
          return `${a}Q`;
        },
        { queued: true },
      );
      const event = await ctx.waitForEvent(paid);
      return `${q}${event.amount}`;
    });
    let fx = await createFixture({ workflows: [wf] });
    try {
      dropTurns(fx.counter);
      const h = await fx.engine.startRun(wf, null);
      await waitForStep(fx.inner, h.id, 'q', 'running');
      await fx.engine.stop({ graceMs: 0 });
      restoreTurns(fx.counter);
      build = 'new';
      fx = await createFixture({ workflows: [wf], counter: fx.counter, clock: fx.clock });
      await fx.engine.sendEvent(h.id, paid, { amount: 1 });
      // The lost attempt is found abandoned at its deadline and dispatched again.
      for (let i = 0; i < 3; i++) {
        await fx.clock.advance(300_001);
        await fx.engine.recover();
      }
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.equal(run.output, 'AQ1');
      assert.deepEqual(ran, ['a', 'q-old', 'q-new']);
    } finally {
      await fx.engine.stop();
    }
  });
});
