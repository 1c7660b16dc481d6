// Crash at every fault point, then recover, and prove the run still completes with each step's
// result recorded exactly once. A step body may run twice only when the crash falls between the
// body and the checkpoint that records its result.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, defineWorkflow } from '@cairn/core';
import type { NewStep, StepTransition } from '@cairn/core/backend';
import { FAULT_POINTS, type FaultInjector, type FaultPoint, ManualClock, createFaults } from '@cairn/core/testing';
import { type EngineCounter, countingStore, createFixture, waitForQuiet } from './helpers/engine-fixture.js';

type Mode = 'inline' | 'queued' | 'mixed';
type Level = 'run' | 'step';

const STEPS = ['s1', 's2', 's3', 's4', 's5'];
const MIDDLE = 's3';
const TIMINGS = { leaseMs: 1000, dispatchTimeoutMs: 2000, queuedStepTimeoutMs: 2000, startGraceMs: 1000, childBackstopMs: 2000 };

/** Does (point, level) have a site to crash at in this mode? */
function applies(point: FaultPoint, level: Level, mode: Mode): boolean {
  if (level === 'run') return point !== 'after-step-body';
  // Step-level sites: after-step-body / before-checkpoint / after-checkpoint wherever the body runs;
  // before-ack only where the step is a queue job of its own.
  if (point === 'after-claim') return false;
  if (point === 'before-ack') return mode !== 'inline';
  return true;
}

/** Crashing here loses a body's result that had already been produced. */
function bodyRunsTwice(point: FaultPoint, level: Level): boolean {
  return level === 'step' && (point === 'after-step-body' || point === 'before-checkpoint');
}

/** Routes only the `nth` matching site to a createFaults injector that crashes once there. */
function crashOnce(point: FaultPoint, level: Level, nth: number): { injector: FaultInjector; crashes: () => number; sites: string[] } {
  const scripted = createFaults([level === 'step' ? { point, stepKey: MIDDLE, times: 1 } : { point, times: 1 }]);
  let seen = 0;
  const sites: string[] = [];
  return {
    injector: {
      hit(site) {
        sites.push(`${site.point}${site.stepKey ? `:${site.stepKey}` : ''}`);
        const matches = site.point === point && (level === 'run' ? site.stepKey === undefined : site.stepKey === MIDDLE);
        if (matches && ++seen === nth) scripted.hit(site);
      },
    },
    crashes: () => scripted.crashes.length,
    sites,
  };
}

function makeWorkflow(mode: Mode, bodies: Map<string, number>) {
  return defineWorkflow('five-steps', async (ctx) => {
    const outputs: string[] = [];
    for (const key of STEPS) {
      const queued = mode === 'queued' || (mode === 'mixed' && key === MIDDLE);
      outputs.push(
        await ctx.step(
          key,
          () => {
            bodies.set(key, (bodies.get(key) ?? 0) + 1);
            return `${key}-out`;
          },
          { queued },
        ),
      );
    }
    return outputs;
  });
}

/** Successful store writes that recorded `key` as succeeded (the step's output). */
function successWrites(counter: EngineCounter, runId: string, key: string): number {
  return counter.calls.filter((c) => {
    if (c.outcome?.ok !== true || c.args[0] !== runId) return false;
    if (c.method === 'steps.transition') {
      const t = c.args[2] as StepTransition;
      // A write that only stamps the delivery turn on a step a queued worker finished
      // (succeeded → succeeded) records no output.
      return t.key === key && t.to.status === 'succeeded' && !t.from.status.includes('succeeded');
    }
    if (c.method === 'steps.insert') {
      const s = c.args[2] as NewStep;
      return s.key === key && s.status === 'succeeded';
    }
    return false;
  }).length;
}

const modes: Mode[] = ['inline', 'queued', 'mixed'];
const recoveries = ['same engine', 'new engine'] as const;

describe('crash recovery at every fault point', () => {
  it('the matrix below covers every fault point', () => {
    for (const point of FAULT_POINTS) {
      assert.ok(
        modes.some((mode) => applies(point, 'run', mode) || applies(point, 'step', mode)),
        `${point} is exercised`,
      );
    }
  });

  for (const mode of modes) {
    for (const point of FAULT_POINTS) {
      for (const level of ['run', 'step'] as const) {
        if (!applies(point, level, mode)) continue;
        // Queued runs meet run-level points once per execution: crash at the first and at a later one.
        const occurrences = level !== 'run' || mode === 'inline' ? [1] : mode === 'queued' ? [1, 3] : [1, 2];
        for (const nth of occurrences) {
          for (const recovery of recoveries) {
            const where = level === 'step' ? `step ${MIDDLE}` : nth === 1 ? 'run' : `run, hit #${nth}`;
            it(`${mode} steps, crash at ${point} (${where}), recovered by the ${recovery}`, async (t) => {
              const clock = new ManualClock();
              const counter = countingStore();
              const bodies = new Map<string, number>();
              const wf = makeWorkflow(mode, bodies);
              const crash = crashOnce(point, level, nth);
              const first = await createFixture({ workflows: [wf], clock, counter, workerId: 'first', timings: TIMINGS, faults: crash.injector as never });
              let current = first;
              try {
                const h = await first.engine.startRun(wf, null);
                await waitForQuiet(counter, h.id);
                assert.equal(crash.crashes(), 1, `the crash happened (sites: ${crash.sites.join(', ')})`);
                if (recovery === 'new engine') {
                  // The process died: whatever its in-memory queue held is gone.
                  await first.engine.stop();
                  current = await createFixture({ workflows: [wf], clock, counter, workerId: 'second', timings: TIMINGS });
                }
                let rounds = 0;
                for (; rounds < 10; rounds++) {
                  const run = await counter.inner.runs.get(h.id);
                  if (run?.status === 'completed' || run?.status === 'failed') break;
                  await clock.advance(TIMINGS.leaseMs + 1);
                  await current.engine.recover();
                  await waitForQuiet(counter, h.id);
                }
                const run = await counter.inner.runs.get(h.id);
                assert.equal(run?.status, 'completed', `run status after ${rounds} recovery rounds: ${run?.status} ${JSON.stringify(run?.error)}`);
                assert.deepEqual(
                  run?.output,
                  STEPS.map((k) => `${k}-out`),
                );
                const steps = await counter.inner.steps.load(h.id);
                assert.deepEqual(
                  steps.map((s) => [s.key, s.status, s.output]),
                  STEPS.map((k) => [k, 'succeeded', `${k}-out`]),
                );
                const history = await current.engine.history(h.id);
                for (const key of STEPS) {
                  const attempts = history.filter((a) => a.stepKey === key);
                  assert.equal(attempts.filter((a) => a.status === 'succeeded').length, 1, `${key}: one succeeded attempt`);
                  assert.equal(attempts.filter((a) => a.status === 'running').length, 0, `${key}: no attempt left open`);
                  assert.equal(successWrites(counter, h.id, key), 1, `${key}: output recorded once`);
                }
                const twice = bodyRunsTwice(point, level);
                const expected = new Map(STEPS.map((k) => [k, k === MIDDLE && twice ? 2 : 1]));
                assert.deepEqual(bodies, expected, 'step body executions');
                if (twice) {
                  // An inline step is recorded once, finished: the attempt that crashed before its
                  // result was written left no record (the run's claim count tells of it instead;
                  // see docs/semantics.md). A queued attempt's start is always on record.
                  assert.deepEqual(
                    history.filter((a) => a.stepKey === MIDDLE).map((a) => [a.attempt, a.status]),
                    mode === 'inline'
                      ? [[1, 'succeeded']]
                      : [
                          [1, 'abandoned'],
                          [2, 'succeeded'],
                        ],
                  );
                }
                assert.deepEqual(
                  first.logs.filter((l) => l.level === 'error'),
                  [],
                );
                t.diagnostic(`recovery rounds: ${rounds}; body runs: ${[...bodies].map(([k, n]) => `${k}=${n}`).join(' ')}`);
              } finally {
                await first.engine.stop();
                if (current !== first) await current.engine.stop();
              }
            });
          }
        }
      }
    }
  }
});

describe('crash recovery: more places', () => {
  async function recoverUntilDone(fx: Awaited<ReturnType<typeof createFixture>>, runId: string): Promise<number> {
    let rounds = 0;
    for (; rounds < 10; rounds++) {
      const run = await fx.counter.inner.runs.get(runId);
      if (run?.status === 'completed' || run?.status === 'failed') break;
      await fx.clock.advance(TIMINGS.leaseMs + 1);
      await fx.engine.recover();
      await waitForQuiet(fx.counter, runId);
    }
    return rounds;
  }

  it('a store outage between creating a child run and recording it leaves exactly one child', async () => {
    const kidBodies: string[] = [];
    const kid = defineWorkflow('kid', async (ctx, n: number) => ctx.step('k', () => (kidBodies.push('k'), n * 2)));
    const parent = defineWorkflow('parent', async (ctx) => ctx.child(kid, 21));
    const fx = await createFixture({ workflows: [parent, kid], timings: TIMINGS });
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
      assert.equal((await fx.inner.runs.get(h.id))!.status, 'running', 'abandoned, not failed');
      await recoverUntilDone(fx, h.id);
      assert.equal(await fx.engine.result(h.id), 42);
      assert.equal((await fx.engine.listRuns({ workflow: 'kid' })).runs.length, 1, 'one child run');
      assert.deepEqual(kidBodies, ['k']);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a store outage on a step’s result write abandons the execution; recovery completes the run', async () => {
    const bodies = new Map<string, number>();
    const wf = makeWorkflow('inline', bodies);
    const fx = await createFixture({ workflows: [wf], timings: TIMINGS });
    try {
      let failed = false;
      // The result write of an inline step is its one insert (recorded once, finished).
      fx.counter.intercept('steps.insert', async (original, runId: string, fence, step: NewStep, now) => {
        if (step.key === MIDDLE && step.status === 'succeeded' && !failed) {
          failed = true;
          throw new CairnError('STORE_ERROR', 'timeout');
        }
        return original(runId, fence, step, now);
      });
      const h = await fx.engine.startRun(wf, null);
      await waitForQuiet(fx.counter, h.id);
      await recoverUntilDone(fx, h.id);
      const run = await fx.inner.runs.get(h.id);
      assert.equal(run?.status, 'completed');
      assert.deepEqual(bodies, new Map(STEPS.map((k) => [k, k === MIDDLE ? 2 : 1])));
      assert.ok(
        fx.logs.some((l) => l.level === 'error' && /abandoned/.test(l.message)),
        'the unexpected failure is logged',
      );
    } finally {
      await fx.engine.stop();
    }
  });

  for (const queued of [false, true]) {
    it(`a crash right after a failed attempt was recorded resumes the retries (${queued ? 'queued' : 'inline'})`, async () => {
      let calls = 0;
      const wf = defineWorkflow('retry-crash', async (ctx) =>
        ctx.step(
          'flaky',
          () => {
            if (++calls === 1) throw new Error('first fails');
            return 'ok';
          },
          { retries: 2, backoff: { type: 'fixed', delay: 100 }, queued },
        ),
      );
      const faults = createFaults([{ point: 'after-checkpoint', stepKey: 'flaky', times: 1 }]);
      const fx = await createFixture({ workflows: [wf], timings: TIMINGS, faults });
      try {
        const h = await fx.engine.startRun(wf, null);
        await waitForQuiet(fx.counter, h.id);
        assert.equal(faults.crashes.length, 1);
        await recoverUntilDone(fx, h.id);
        assert.equal(await fx.engine.result(h.id), 'ok');
        assert.equal(calls, 2);
        assert.deepEqual(
          (await fx.engine.history(h.id)).map((a) => [a.attempt, a.status]),
          [
            [1, 'failed'],
            [2, 'succeeded'],
          ],
        );
      } finally {
        await fx.engine.stop();
      }
    });
  }
});
