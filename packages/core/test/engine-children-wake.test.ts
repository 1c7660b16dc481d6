// A parent waiting for its child is woken by the child's end (not replayed periodically), with a
// long backstop for a lost wake-up; ctx.childOutcome returns a child's end as a value; ctx.startChild
// starts a detached child.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, type ChildOutcome, defineWorkflow } from '@cairn/core';
import type { NewStep } from '@cairn/core/backend';
import { createFaults } from '@cairn/core/testing';
import { type Fixture, createFixture, rejectsWithCode, turns, waitForIdle, waitForQuiet, waitForStatus, waitForStep } from './helpers/engine-fixture.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** How many times `runId` was claimed (executed) through the fixture's store. */
function claims(fx: Fixture, runId: string): number {
  return fx.counter.calls.filter((c) => c.method === 'runs.claim' && c.args[0] === runId).length;
}

/** Moves the clock `total` ms forward in steps of `step`, letting the engine work after each. */
async function drive(fx: Fixture, total: number, step: number): Promise<void> {
  for (let moved = 0; moved < total; moved += step) {
    await fx.clock.advance(Math.min(step, total - moved));
    await turns(40);
  }
}

describe('children: waking the parent', () => {
  it('a parent is executed twice while its child runs for a day: to start it, and once after it ended', async () => {
    const kid = defineWorkflow('day-kid', async (ctx) => {
      await ctx.sleep('day', '1d');
      return 'rested';
    });
    const parent = defineWorkflow('day-parent', async (ctx) => ctx.child(kid, null));
    const fx = await createFixture({ workflows: [parent, kid], timings: { childBackstopMs: 2 * 24 * HOUR } });
    try {
      const h = await fx.engine.startRun(parent, null);
      const childId = (await waitForStep(fx.inner, h.id, 'child:day-kid', 'waiting')).childRunId!;
      await waitForIdle(fx.inner, childId);
      await waitForIdle(fx.inner, h.id);
      // Every 10 minutes of the child's day: no execution of the parent.
      await drive(fx, 24 * HOUR - MINUTE, 10 * MINUTE);
      assert.equal(claims(fx, h.id), 1, 'not executed while its child runs');
      await drive(fx, 2 * MINUTE, MINUTE);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 'rested');
      assert.equal(claims(fx, h.id), 2);
    } finally {
      await fx.engine.stop();
    }
  });

  it('with the default backstop (1 h) a parent looks at a long child at most once an hour', async () => {
    const kid = defineWorkflow('long-kid', async (ctx) => {
      await ctx.sleep('work', '210m');
      return 'done';
    });
    const parent = defineWorkflow('long-parent', async (ctx) => ctx.child(kid, null));
    const fx = await createFixture({ workflows: [parent, kid] });
    try {
      const h = await fx.engine.startRun(parent, null);
      await waitForStep(fx.inner, h.id, 'child:long-kid', 'waiting');
      await waitForIdle(fx.inner, h.id);
      await drive(fx, 3 * HOUR + 30 * MINUTE + MINUTE, 5 * MINUTE);
      await waitForStatus(fx.inner, h.id, 'completed');
      // Started, the backstop at 1 h, 2 h and 3 h, and the child's end.
      assert.equal(claims(fx, h.id), 5);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a wake-up lost to a crash right after the child ended is made up within a lease, not at the backstop', async () => {
    const kid = defineWorkflow('crash-end-kid', async (ctx) => {
      await ctx.sleep('work', '10m');
      return 7;
    });
    const parent = defineWorkflow('crash-end-parent', async (ctx) => ctx.child(kid, null));
    const faults = createFaults();
    // Recovery on, at its default interval: it dispatches the parent once the pre-wake makes it due.
    const fx = await createFixture({ workflows: [parent, kid], faults, recoveryIntervalMs: 2_000 });
    try {
      const h = await fx.engine.startRun(parent, null);
      const childId = (await waitForStep(fx.inner, h.id, 'child:crash-end-kid', 'waiting')).childRunId!;
      await waitForIdle(fx.inner, childId);
      await waitForIdle(fx.inner, h.id);
      // The child's terminal write happens, then the process "dies" before waking the parent.
      faults.crashAt({ point: 'after-checkpoint', runId: childId });
      await drive(fx, 10 * MINUTE, MINUTE);
      await waitForStatus(fx.inner, childId, 'completed');
      assert.equal(faults.crashes.length, 1);
      const crashedAt = fx.clock.now();
      // Made due by the pre-wake, a lease (30 s) after the child's end.
      assert.equal((await fx.inner.runs.get(h.id))?.wakeAt, crashedAt + 30_000);
      await drive(fx, 28_000, 1_000);
      assert.equal((await fx.inner.runs.get(h.id))?.status, 'waiting', 'nothing woke the parent yet');
      await drive(fx, 6_000, 1_000);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 7);
      assert.equal(claims(fx, h.id), 2, 'started, then the pre-wake');
      // Each end of a child costs one request more (the pre-wake, a promise: decision 78); its
      // backstop is a safety net. The crash took the wake-up that keeps the promise.
      assert.deepEqual(
        fx.counter.calls
          .filter((c) => (c.method === 'runs.wake' || c.method === 'runs.promiseWake' || c.method === 'runs.keepPromise') && c.args[0] === h.id)
          .map((c) => [c.method, (c.args[1] as number) - crashedAt]),
        [['runs.promiseWake', 30_000]],
      );
    } finally {
      await fx.engine.stop();
    }
  });

  it('deleting a running child wakes its parent, which takes it as deleted', async () => {
    const kid = defineWorkflow('doomed-kid', async (ctx) => ctx.sleep('forever', '100d'));
    const parent = defineWorkflow('doomed-parent', async (ctx) => {
      const outcome = await ctx.childOutcome(kid, null);
      return outcome.ok ? 'ok' : { status: outcome.status, code: outcome.error.code };
    });
    const fx = await createFixture({ workflows: [parent, kid] });
    try {
      const h = await fx.engine.startRun(parent, null);
      const childId = (await waitForStep(fx.inner, h.id, 'child:doomed-kid', 'waiting')).childRunId!;
      await waitForIdle(fx.inner, childId);
      await waitForIdle(fx.inner, h.id);
      const before = fx.clock.now();
      assert.equal(await fx.engine.deleteRun(childId, { force: true }), true);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(fx.clock.now(), before);
      assert.deepEqual(await h.result(), { status: 'deleted', code: 'CHILD_FAILED' });
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('children: ctx.childOutcome', () => {
  it('returns completed, failed and cancelled children as values; the parent is not failed', async () => {
    const good = defineWorkflow('good-kid', async (_ctx, n: number) => n + 1);
    const bad = defineWorkflow('bad-kid', async () => {
      throw new TypeError('bad kid');
    });
    const sleepy = defineWorkflow('sleepy-kid', async (ctx) => ctx.sleep('nap', '1d'));
    const seen: ChildOutcome<unknown>[][] = [];
    const parent = defineWorkflow('outcome-parent', async (ctx) => {
      const outcomes = await Promise.all([ctx.childOutcome(good, 1), ctx.childOutcome(bad, null), ctx.childOutcome(sleepy, null, { name: 'sleepy' })]);
      seen.push(outcomes);
      await ctx.sleep('after', '1m');
      return outcomes.map((o) =>
        o.ok ? { ok: true, output: o.output as number } : { ok: false, status: o.status, code: o.error.code, cause: (o.error.cause as Error).message },
      );
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const fx = await createFixture({ workflows: [parent, good, bad, sleepy], stickyExecutions: false });
    try {
      const h = await fx.engine.startRun(parent, null);
      const sleepyId = (await waitForStep(fx.inner, h.id, 'sleepy', 'waiting')).childRunId!;
      await waitForIdle(fx.inner, sleepyId);
      await fx.engine.cancel(sleepyId, { reason: 'not needed' });
      await waitForStep(fx.inner, h.id, 'after', 'waiting');
      await drive(fx, 2 * MINUTE, MINUTE);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.deepEqual(await h.result(), [
        { ok: true, output: 2 },
        { ok: false, status: 'failed', code: 'CHILD_FAILED', cause: 'bad kid' },
        { ok: false, status: 'cancelled', code: 'CHILD_FAILED', cause: `Run ${sleepyId} was cancelled: not needed` },
      ]);
      assert.equal(seen.length, 2, 'replayed once after the sleep');
      const [first, replayed] = seen as [ChildOutcome<unknown>[], ChildOutcome<unknown>[]];
      for (let i = 0; i < 3; i += 1) {
        const a = first[i]!;
        const b = replayed[i]!;
        assert.equal(a.ok, b.ok);
        if (!a.ok && !b.ok) {
          assert.ok(b.error instanceof CairnError, 'a replayed error is a CairnError');
          assert.equal(b.status, a.status);
          assert.equal(b.error.message, a.error.message);
          assert.deepEqual(b.error.data, a.error.data);
        } else {
          assert.deepEqual(b, a);
        }
      }
    } finally {
      await fx.engine.stop();
    }
  });

  it('a queued step after a childOutcome is reached by the step worker (the probe replays the outcome as a value)', async () => {
    const bad = defineWorkflow('probe-bad-kid', async () => {
      throw new Error('nope');
    });
    const bodies: string[] = [];
    const parent = defineWorkflow('probe-parent', async (ctx) => {
      const outcome = await ctx.childOutcome(bad, null);
      if (outcome.ok) return 'unexpected';
      return ctx.step('after', () => (bodies.push('after'), outcome.status), { queued: true });
    });
    const fx = await createFixture({ workflows: [parent, bad] });
    try {
      const h = await fx.engine.startRun(parent, null);
      await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(await h.result(), 'failed');
      assert.deepEqual(bodies, ['after']);
    } finally {
      await fx.engine.stop();
    }
  });

  it('refuses bad options with INVALID_INPUT before anything is written', async () => {
    const kid = defineWorkflow('opt-kid', async () => 1);
    const codes: string[] = [];
    const parent = defineWorkflow('opt-parent', async (ctx) => {
      for (const call of [
        () => ctx.childOutcome(kid, null, { nmae: 'x' } as never),
        () => ctx.childOutcome(kid, null, 'x' as never),
        () => ctx.childOutcome(kid, null, { name: 'x#2' }),
        () => ctx.startChild(kid, null, { name: 42 } as never),
        () => ctx.startChild(kid, null, [] as never),
        () => ctx.startChild('no-such-workflow', null),
        () => ctx.startChild(kid, (() => 1) as never),
      ]) {
        try {
          await call();
          codes.push('resolved');
        } catch (error) {
          codes.push((error as CairnError).code);
        }
      }
      return codes;
    });
    const fx = await createFixture({ workflows: [parent, kid] });
    try {
      const h = await fx.engine.startRun(parent, null);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.deepEqual(await h.result(), [
        'INVALID_INPUT',
        'INVALID_INPUT',
        'INVALID_INPUT',
        'INVALID_INPUT',
        'INVALID_INPUT',
        'WORKFLOW_NOT_FOUND',
        'NOT_SERIALIZABLE',
      ]);
      assert.deepEqual(await fx.inner.steps.load(h.id), []);
      assert.equal((await fx.engine.listRuns({ workflow: 'opt-kid' })).runs.length, 0);
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('children: ctx.startChild', () => {
  it('returns the child id at once, replays it, and the child outlives a parent that fails', async () => {
    const kid = defineWorkflow('free-kid', async (ctx, n: number) => {
      await ctx.sleep('work', '2h');
      return n * 10;
    });
    const ids: string[] = [];
    const parent = defineWorkflow('free-parent', async (ctx) => {
      const [id, a] = await Promise.all([ctx.startChild(kid, 4), ctx.step('a', () => 'a')]);
      ids.push(id);
      await ctx.sleep('pause', '1m');
      throw new Error(`parent gives up after starting ${id} (${a})`);
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const fx = await createFixture({ workflows: [parent, kid], stickyExecutions: false });
    try {
      const h = await fx.engine.startRun(parent, null);
      await waitForStep(fx.inner, h.id, 'pause', 'waiting');
      await drive(fx, 2 * MINUTE, MINUTE);
      await waitForStatus(fx.inner, h.id, 'failed');
      assert.equal(ids.length, 2);
      assert.equal(ids[0], ids[1]);
      const childId = ids[0]!;
      const child = await fx.inner.runs.get(childId);
      assert.equal(child?.parent, undefined);
      assert.equal(child?.status, 'waiting', 'still running after its parent failed');
      await drive(fx, 2 * HOUR, 10 * MINUTE);
      await waitForStatus(fx.inner, childId, 'completed');
      assert.equal(await fx.engine.result(childId), 40);
      assert.equal(claims(fx, h.id), 2, 'the child ending did not wake its (failed) parent');
    } finally {
      await fx.engine.stop();
    }
  });

  it('a queued step after a startChild is reached by the step worker, which sees the same id', async () => {
    const kid = defineWorkflow('probe-free-kid', async () => 'kid');
    const seen: string[] = [];
    const parent = defineWorkflow('probe-free-parent', async (ctx) => {
      const id = await ctx.startChild(kid, null);
      return ctx.step('use-id', () => (seen.push(id), id), { queued: true });
    });
    const fx = await createFixture({ workflows: [parent, kid] });
    try {
      const h = await fx.engine.startRun(parent, null);
      await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      const id = await h.result();
      assert.deepEqual(seen, [id]);
      assert.equal((await fx.inner.steps.load(h.id))[0]?.childRunId, id);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a detached child does not take its parent\u2019s deadline', async () => {
    const kid = defineWorkflow('late-kid', async (ctx) => {
      await ctx.sleep('work', '3h');
      return 'late but done';
    });
    const parent = defineWorkflow('deadline-parent', async (ctx) => {
      await ctx.startChild(kid, null);
      await ctx.sleep('wait', '1d');
    });
    const fx = await createFixture({ workflows: [parent, kid] });
    try {
      const h = await fx.engine.startRun(parent, null, { deadline: '1h' });
      const childId = (await waitForStep(fx.inner, h.id, 'startChild:late-kid', 'succeeded')).childRunId!;
      assert.equal((await fx.inner.runs.get(childId))?.deadline, undefined);
      await drive(fx, 4 * HOUR, 10 * MINUTE);
      await waitForStatus(fx.inner, h.id, 'failed');
      await rejectsWithCode(h.result(), 'RUN_FAILED');
      await waitForStatus(fx.inner, childId, 'completed');
      assert.equal(await fx.engine.result(childId), 'late but done');
    } finally {
      await fx.engine.stop();
    }
  });

  it('a store outage between creating the detached child and recording it leaves exactly one child', async () => {
    const kid = defineWorkflow('outage-kid', async (_ctx, n: number) => n);
    const parent = defineWorkflow('outage-parent', async (ctx) => ctx.startChild(kid, 5));
    const fx = await createFixture({ workflows: [parent, kid], timings: { leaseMs: 1000, startGraceMs: 1000 } });
    try {
      let failed = false;
      fx.counter.intercept('steps.insert', async (original, runId: string, fence, step: NewStep, now) => {
        if (step.kind === 'child' && !failed) {
          failed = true;
          throw new CairnError('STORE_ERROR', 'connection reset');
        }
        return original(runId, fence, step, now);
      });
      const h = await fx.engine.startRun(parent, null);
      await waitForQuiet(fx.counter, h.id);
      assert.equal(failed, true);
      for (let i = 0; i < 20 && (await fx.inner.runs.get(h.id))?.status !== 'completed'; i += 1) {
        await fx.clock.advance(1000);
        await fx.engine.recover();
        await turns(40);
      }
      const id = await h.result();
      const kids = (await fx.engine.listRuns({ workflow: 'outage-kid' })).runs;
      assert.deepEqual(
        kids.map((r) => r.id),
        [id],
        'one child run, the one recorded',
      );
      assert.equal(kids[0]?.idempotencyKey, `$child:${h.id}:startChild:outage-kid`);
    } finally {
      await fx.engine.stop();
    }
  });
});
