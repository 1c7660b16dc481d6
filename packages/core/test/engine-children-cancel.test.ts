import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createLocalQueue, defineWorkflow } from '@cairn/core';
import type { Queue } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';
import {
  codeChain,
  countingStore,
  createFixture,
  gate,
  rejectsWithCode,
  turns,
  until,
  waitForIdle,
  waitForStatus,
  waitForStep,
} from './helpers/engine-fixture.js';

describe('children', () => {
  it('a child run returns its output to the parent (by definition and by name; repeated children get distinct keys)', async () => {
    const kid = defineWorkflow('kid', async (ctx, input: { n: number }) => ctx.step('double', () => input.n * 2));
    const parent = defineWorkflow('parent', async (ctx) => {
      const a = await ctx.child(kid, { n: 21 });
      const b = await ctx.child<{ n: number }, number>('kid', { n: 1 });
      const c = await ctx.child(kid, { n: 0 }, { name: 'zero' });
      return [a, b, c];
    });
    const fx = await createFixture({ workflows: [parent, kid] });
    try {
      const h = await fx.engine.startRun(parent, null);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.deepEqual(await h.result(), [42, 2, 0]);
      const steps = await fx.inner.steps.load(h.id);
      assert.deepEqual(
        steps.map((s) => [s.key, s.kind, s.status, s.output]),
        [
          ['child:kid', 'child', 'succeeded', 42],
          ['child:kid#2', 'child', 'succeeded', 2],
          ['zero', 'child', 'succeeded', 0],
        ],
      );
      for (const step of steps) {
        const child = await fx.inner.runs.get(step.childRunId!);
        assert.equal(child?.status, 'completed');
        assert.deepEqual(child?.parent, { runId: h.id, stepKey: step.key });
      }
    } finally {
      await fx.engine.stop();
    }
  });

  it('a failed child throws CHILD_FAILED into the parent (catchable; uncaught it fails the parent)', async () => {
    const kid = defineWorkflow('failing-kid', async (ctx) => {
      await ctx.step('work', () => {
        throw new Error('kid broke');
      });
    });
    const seen: string[][] = [];
    const catching = defineWorkflow('catching-parent', async (ctx) => {
      try {
        await ctx.child(kid, null);
        return 'resolved';
      } catch (error) {
        seen.push(codeChain(error));
        return `caught ${(error as CairnError).code}`;
      }
    });
    const plain = defineWorkflow('plain-parent', async (ctx) => ctx.child(kid, null));
    const fx = await createFixture({ workflows: [catching, plain, kid] });
    try {
      const a = await fx.engine.startRun(catching, null);
      const b = await fx.engine.startRun(plain, null);
      await waitForStatus(fx.inner, a.id, ['completed', 'failed']);
      await waitForStatus(fx.inner, b.id, ['completed', 'failed']);
      assert.equal(await a.result(), 'caught CHILD_FAILED');
      assert.deepEqual(seen[0], ['CHILD_FAILED', 'STEP_FAILED', '(Error)']);
      const err = await rejectsWithCode(b.result(), 'RUN_FAILED');
      assert.deepEqual(codeChain(err).slice(0, 2), ['RUN_FAILED', 'CHILD_FAILED']);
      const [step] = await fx.inner.steps.load(b.id);
      assert.equal(step!.status, 'failed');
      assert.equal(step!.error?.code, 'CHILD_FAILED');
      assert.equal((await fx.inner.runs.get(step!.childRunId!))?.status, 'failed');
    } finally {
      await fx.engine.stop();
    }
  });

  it('a cancelled child throws CHILD_FAILED into the parent', async () => {
    let afterNap = 0;
    const kid = defineWorkflow('sleepy-kid', async (ctx) => {
      await ctx.sleep('nap', '1h');
      afterNap++;
      return 'woke';
    });
    const parent = defineWorkflow('waiting-parent', async (ctx) => {
      try {
        return await ctx.child(kid, null);
      } catch (error) {
        return { code: (error as CairnError).code, status: ((error as CairnError).data as { status?: string }).status };
      }
    });
    const fx = await createFixture({ workflows: [parent, kid] });
    try {
      const h = await fx.engine.startRun(parent, null);
      const childStep = await waitForStep(fx.inner, h.id, 'child:sleepy-kid', 'waiting');
      const childId = childStep.childRunId!;
      await waitForIdle(fx.inner, childId);
      await fx.engine.cancel(childId);
      await waitForStatus(fx.inner, childId, 'cancelled');
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.deepEqual(await h.result(), { code: 'CHILD_FAILED', status: 'cancelled' });
      await rejectsWithCode(fx.engine.result(childId), 'RUN_CANCELLED');
      assert.equal(afterNap, 0);
    } finally {
      await fx.engine.stop();
    }
  });

  it('cancelling a parent cancels its waiting child', async () => {
    let afterNap = 0;
    const kid = defineWorkflow('kid-1h', async (ctx) => {
      await ctx.sleep('nap', '1h');
      afterNap++;
    });
    const parent = defineWorkflow('parent-1h', async (ctx) => ctx.child(kid, null));
    const fx = await createFixture({ workflows: [parent, kid] });
    try {
      const h = await fx.engine.startRun(parent, null);
      const childId = (await waitForStep(fx.inner, h.id, 'child:kid-1h', 'waiting')).childRunId!;
      await waitForIdle(fx.inner, childId);
      await waitForIdle(fx.inner, h.id);
      await fx.engine.cancel(h.id);
      await waitForStatus(fx.inner, h.id, 'cancelled');
      await waitForStatus(fx.inner, childId, 'cancelled');
      await rejectsWithCode(h.result(), 'RUN_CANCELLED');
      await rejectsWithCode(fx.engine.result(childId), 'RUN_CANCELLED');
      await fx.clock.advance(3_600_000);
      await turns(20);
      assert.equal(afterNap, 0);
    } finally {
      await fx.engine.stop();
    }
  });

  it('cancellation propagates down a chain of children (grandparent → parent → child)', async () => {
    let leafWoke = 0;
    const leaf = defineWorkflow('leaf', async (ctx) => {
      await ctx.sleep('nap', '1h');
      leafWoke++;
    });
    const middle = defineWorkflow('middle', async (ctx) => ctx.child(leaf, null));
    const top = defineWorkflow('top', async (ctx) => ctx.child(middle, null));
    const fx = await createFixture({ workflows: [top, middle, leaf] });
    try {
      const h = await fx.engine.startRun(top, null);
      const middleId = (await waitForStep(fx.inner, h.id, 'child:middle', 'waiting')).childRunId!;
      const leafId = (await waitForStep(fx.inner, middleId, 'child:leaf', 'waiting')).childRunId!;
      await waitForIdle(fx.inner, leafId);
      await fx.engine.cancel(h.id);
      for (const id of [h.id, middleId, leafId]) await waitForStatus(fx.inner, id, 'cancelled');
      await fx.clock.advance(3_600_000);
      await turns(20);
      assert.equal(leafWoke, 0);
    } finally {
      await fx.engine.stop();
    }
  });

  it('cancelling a parent stops its child at the child’s next step boundary while the child is executing', async () => {
    const bodies: string[] = [];
    const inA = gate();
    const release = gate();
    const kid = defineWorkflow('busy-kid', async (ctx) => {
      await ctx.step('a', async () => {
        bodies.push('a');
        inA.open();
        await release.promise;
      });
      await ctx.step('b', () => void bodies.push('b'));
      return 'kid done';
    });
    const parent = defineWorkflow('busy-parent', async (ctx) => ctx.child(kid, null));
    const fx = await createFixture({ workflows: [parent, kid] });
    try {
      const h = await fx.engine.startRun(parent, null);
      await inA.promise;
      const childId = (await fx.inner.steps.load(h.id))[0]!.childRunId!;
      await waitForIdle(fx.inner, h.id);
      await fx.engine.cancel(h.id);
      await waitForStatus(fx.inner, h.id, 'cancelled');
      await turns(10);
      release.open();
      const child = await waitForStatus(fx.inner, childId, ['cancelled', 'completed', 'failed']);
      assert.equal(child.status, 'cancelled');
      assert.deepEqual(bodies, ['a']);
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('cancellation', () => {
  it('is observed at a step boundary: ctx.signal and the step signal abort, and no later step runs', async () => {
    const bodies: string[] = [];
    const inA = gate<AbortSignal>();
    const release = gate();
    let ctxSignalAborted: boolean | undefined;
    const caught: string[] = [];
    const wf = defineWorkflow('cancel-mid-step', async (ctx) => {
      await ctx.step('a', async (s) => {
        bodies.push('a');
        inA.open(s.signal);
        await release.promise; // ignores its signal on purpose
        return 'a done';
      });
      ctxSignalAborted = ctx.signal.aborted;
      try {
        await ctx.step('b', () => void bodies.push('b'));
      } catch (error) {
        caught.push((error as CairnError).code);
      }
      // Catching CANCELLED does not let the workflow go on.
      await ctx.step('c', () => void bodies.push('c')).catch((error: CairnError) => caught.push(error.code));
      return 'finished anyway';
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      const stepSignal = await inA.promise;
      await fx.engine.cancel(h.id);
      assert.equal(stepSignal.aborted, true, 'the running step’s signal aborts at once');
      assert.ok(CairnError.is(stepSignal.reason, 'CANCELLED'));
      release.open();
      const run = await waitForStatus(fx.inner, h.id, ['cancelled', 'completed', 'failed']);
      assert.equal(run.status, 'cancelled');
      assert.equal(run.error?.code, 'CANCELLED');
      assert.equal(ctxSignalAborted, true);
      assert.deepEqual(bodies, ['a']);
      assert.deepEqual(caught, ['CANCELLED', 'CANCELLED']);
      const err = await rejectsWithCode(h.result(), 'RUN_CANCELLED');
      assert.deepEqual(codeChain(err), ['RUN_CANCELLED', 'CANCELLED']);
      assert.deepEqual(
        (await fx.inner.steps.load(h.id)).map((s) => s.key),
        ['a'],
      );
    } finally {
      await fx.engine.stop();
    }
  });

  it('a cancel during an in-place retry wait ends the run without further attempts', async () => {
    let calls = 0;
    const wf = defineWorkflow('cancel-retrying', async (ctx) =>
      ctx.step(
        'flaky',
        () => {
          calls++;
          throw new Error('down');
        },
        { retries: 5, backoff: { type: 'fixed', delay: 1000 } },
      ),
    );
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForStep(fx.inner, h.id, 'flaky', 'retry_wait');
      assert.equal((await fx.inner.runs.get(h.id))!.status, 'running', 'waiting in place');
      await fx.engine.cancel(h.id);
      await waitForStatus(fx.inner, h.id, 'cancelled');
      await fx.clock.advance(10_000);
      await turns(20);
      assert.equal(calls, 1);
      await rejectsWithCode(h.result(), 'RUN_CANCELLED');
    } finally {
      await fx.engine.stop();
    }
  });

  it('a run waiting on a timer is cancelled at once, and the code after the timer never runs', async () => {
    let after = 0;
    const wf = defineWorkflow('cancel-sleeping', async (ctx) => {
      await ctx.sleep('nap', '1d');
      after++;
      await ctx.step('after', () => after++);
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      await fx.engine.cancel(h.id);
      await waitForStatus(fx.inner, h.id, 'cancelled');
      await fx.clock.advance(86_400_000);
      await turns(20);
      assert.equal(after, 0);
      await rejectsWithCode(h.result(), 'RUN_CANCELLED');
    } finally {
      await fx.engine.stop();
    }
  });

  it('a cancel requested through another engine is observed by the executing one at its next lease renewal', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const bodies: string[] = [];
    const inA = gate<AbortSignal>();
    const release = gate();
    const wf = defineWorkflow('cancel-remote', async (ctx) => {
      await ctx.step('a', async (s) => {
        bodies.push('a');
        inA.open(s.signal);
        await release.promise;
      });
      await ctx.step('b', () => void bodies.push('b'));
    });
    const timings = { leaseMs: 3000 };
    const a = await createFixture({ workflows: [wf], clock, counter, workerId: 'A', timings });
    const b = await createFixture({ workflows: [wf], clock, counter, workerId: 'B', timings });
    try {
      const h = await a.engine.startRun(wf, null);
      const signal = await inA.promise;
      await b.engine.cancel(h.id);
      await turns(10);
      assert.equal(signal.aborted, false, 'A has not renewed its lease yet');
      await clock.advance(1000); // leaseMs / 3: A renews and learns of the cancel
      await until(() => signal.aborted, 'A observes the cancel');
      release.open();
      await waitForStatus(counter.inner, h.id, 'cancelled');
      assert.deepEqual(bodies, ['a']);
    } finally {
      await a.engine.stop();
      await b.engine.stop();
    }
  });

  it('a queued step whose job is picked up after the cancel was requested does not run', async () => {
    const clock = new ManualClock();
    const inner = createLocalQueue({ clock });
    // Holds every job until released, so the test decides who goes first.
    const held: Array<() => Promise<void>> = [];
    const holding: Queue = {
      name: inner.name,
      capabilities: inner.capabilities,
      work: (name, handler, options) => inner.work(name, handler, options),
      close: () => inner.close(),
      send: async (name, payload, options) => void held.push(() => inner.send(name, payload, options)),
    };
    const bodies: string[] = [];
    const wf = defineWorkflow('cancel-queued', async (ctx) => {
      await ctx.step('q', () => void bodies.push('q'), { queued: true });
      await ctx.step('after', () => void bodies.push('after'));
    });
    const fx = await createFixture({ workflows: [wf], clock, queue: holding });
    try {
      const h = await fx.engine.startRun(wf, null);
      await held.shift()!(); // the run's first job
      await waitForStep(fx.inner, h.id, 'q', 'scheduled');
      await waitForIdle(fx.inner, h.id);
      const stepJob = held.shift()!;
      await fx.engine.cancel(h.id);
      await stepJob(); // the step worker gets its job before the orchestrator handles the cancel
      await turns(20);
      assert.deepEqual(bodies, [], 'a step that starts after the cancel was requested never runs');
      while (held.length > 0) await held.shift()!();
      await waitForStatus(fx.inner, h.id, 'cancelled');
      await turns(20);
      while (held.length > 0) await held.shift()!();
      await turns(20);
      assert.deepEqual(bodies, []);
    } finally {
      await fx.engine.stop();
      await inner.close();
    }
  });

  it('cancel of a finished run is a no-op; cancel of a missing run throws RUN_NOT_FOUND', async () => {
    const ok = defineWorkflow('finishes', async (ctx) => ctx.step('s', () => 'out'));
    const bad = defineWorkflow('fails', async () => {
      throw new Error('nope');
    });
    const fx = await createFixture({ workflows: [ok, bad] });
    try {
      const done = await fx.engine.startRun(ok, null);
      const failed = await fx.engine.startRun(bad, null);
      await waitForStatus(fx.inner, done.id, 'completed');
      await waitForStatus(fx.inner, failed.id, 'failed');
      const before = [await fx.inner.runs.get(done.id), await fx.inner.runs.get(failed.id)];
      fx.counter.reset();
      await fx.engine.cancel(done.id);
      await fx.engine.cancel(failed.id);
      await turns(20);
      const after = [await fx.inner.runs.get(done.id), await fx.inner.runs.get(failed.id)];
      assert.deepEqual(after, before);
      assert.equal(after[0]!.cancelRequested, false);
      assert.equal(await done.result(), 'out');
      await rejectsWithCode(failed.result(), 'RUN_FAILED');
      assert.equal(fx.counter.count('runs.claim'), 0, 'nothing was dispatched');
      await rejectsWithCode(fx.engine.cancel('0190f3d2-0000-7000-8000-000000000000'), 'RUN_NOT_FOUND');
    } finally {
      await fx.engine.stop();
    }
  });
});
