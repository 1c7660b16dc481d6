import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { SimulatedCrash, type FaultInjector, type FaultSite } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from './engine-world.js';

/** Kills the "process" every time the body of step `key` returns, before its result is written. */
class CrashAfterBodyOf implements FaultInjector {
  crashes = 0;
  constructor(private readonly key: string) {}
  hit(site: FaultSite): void {
    if (site.point !== 'after-step-body' || site.stepKey !== this.key) return;
    this.crashes += 1;
    throw new SimulatedCrash(site);
  }
}

/** Engine: a step whose body kills its process every time ends failed; it never loops for ever. */
export const crashLoopGroup: CaseGroup = caseGroup('engine.crash-loop', 'engine: a crash-looping step ends failed after its attempts', [
  conformanceCase('a step whose body kills its process every time ends failed after its attempts, every recorded attempt in the history', async (env) => {
    let bodies = 0;
    const wf = defineWorkflow('crash-loop', async (ctx) => {
      await ctx.step('fine', () => 'ok');
      return ctx.step(
        'boom',
        () => {
          bodies += 1;
          return 'never recorded';
        },
        { retries: 1 },
      );
    });
    const faults = new CrashAfterBodyOf('boom');
    const w = await engineWorld(env, [wf], { faults });
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id, { maxTimers: 400 });
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'STEP_FAILED');
    const steps = await w.raw.steps.load(handle.id);
    const boom = steps.find((s) => s.key === 'boom');
    assert.equal(boom?.status, 'failed');
    assert.equal(boom?.error?.code, 'ATTEMPT_ABANDONED');
    // maxAttempts 2 plus the grace of three for abandoned attempts (decision 5): five recorded
    // attempts, each abandoned. On a store that records a step once finished, claim 1 records
    // `fine` and runs `boom` before anything records it; claim 2 follows a claim that made progress,
    // so it does the same; claim 3 follows one that recorded nothing, and from then on (careful
    // mode) every attempt's start is recorded before its body runs.
    const history = (await w.raw.history.list(handle.id)).filter((a) => a.stepKey === 'boom');
    assert.deepEqual(
      history.map((a) => [a.attempt, a.status]),
      [1, 2, 3, 4, 5].map((n) => [n, 'abandoned']),
    );
    for (const attempt of history) assert.ok(attempt.endedAt !== undefined && attempt.endedAt >= attempt.startedAt, 'each attempt has its start and end');
    const unrecorded = env.store.capabilities.insertFinished === true ? 2 : 0;
    assert.equal(bodies, 5 + unrecorded, 'the body ran once per recorded attempt, plus the unrecorded ones');
    assert.equal(faults.crashes, bodies);
  }),
]);
