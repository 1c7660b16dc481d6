import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import type { AttemptRecord } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

const MINUTE = 60_000;

/** Gaps between the end of one attempt and the start of the next. */
function gaps(history: AttemptRecord[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < history.length; i += 1) out.push(history[i]!.startedAt - (history[i - 1]!.endedAt ?? Number.NaN));
  return out;
}

/** Engine scenarios: retries belong to the engine and every attempt is recorded. */
export const retriesGroup: CaseGroup = caseGroup('engine.retries', 'engine: retries', [
  conformanceCase('a failing step is retried until it succeeds; every attempt is in the history', async (env) => {
    let calls = 0;
    const wf = defineWorkflow('retry-until-ok', async (ctx) =>
      ctx.step(
        'flaky',
        () => {
          calls += 1;
          if (calls < 3) throw new Error(`failure ${calls}`);
          return 'ok';
        },
        { retries: 3, backoff: { type: 'fixed', delay: 500 } },
      ),
    );
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'ok');
    assert.equal(calls, 3);
    const history = await w.raw.history.list(handle.id);
    assert.deepEqual(
      history.map((a) => [a.attempt, a.status, a.error?.message ?? null]),
      [
        [1, 'failed', 'failure 1'],
        [2, 'failed', 'failure 2'],
        [3, 'succeeded', null],
      ],
    );
    for (const gap of gaps(history)) assert.ok(gap >= 500, `attempts must be at least the backoff apart, got ${gap} ms`);
    const [step] = await w.raw.steps.load(handle.id);
    assert.deepEqual([step?.status, step?.attempt, step?.maxAttempts], ['succeeded', 3, 4]);
  }),

  conformanceCase('a step that keeps failing fails the run after exactly retries + 1 attempts', async (env) => {
    let calls = 0;
    const wf = defineWorkflow('retry-exhausted', async (ctx) =>
      ctx.step(
        'doomed',
        () => {
          calls += 1;
          throw new TypeError(`nope ${calls}`);
        },
        { retries: 2, backoff: { type: 'fixed', delay: 10 } },
      ),
    );
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'STEP_FAILED');
    assert.equal(calls, 3);
    assert.deepEqual(
      (await w.raw.history.list(handle.id)).map((a) => [a.attempt, a.status, a.error?.name]),
      [
        [1, 'failed', 'TypeError'],
        [2, 'failed', 'TypeError'],
        [3, 'failed', 'TypeError'],
      ],
    );
    assert.equal((await w.raw.steps.load(handle.id))[0]?.status, 'failed');
    const error = await rejectsWithCode(handle.result(), 'RUN_FAILED');
    assert.ok(error.message.length > 0);
  }),

  conformanceCase('a long backoff suspends the run without a lease, and it resumes when the retry is due', async (env) => {
    let calls = 0;
    const wf = defineWorkflow('retry-suspends', async (ctx) =>
      ctx.step(
        'slow',
        () => {
          calls += 1;
          if (calls === 1) throw new Error('first');
          return calls;
        },
        { retries: 1, backoff: { type: 'fixed', delay: '10m' } },
      ),
    );
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits for its retry', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    const waiting = await w.raw.runs.get(handle.id);
    assert.equal(waiting?.lease, undefined);
    assert.equal(waiting?.wakeAt, env.t0 + 10 * MINUTE);
    assert.equal((await w.raw.steps.load(handle.id))[0]?.status, 'retry_wait');
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 2);
    const history = await w.raw.history.list(handle.id);
    assert.ok((history[1]?.startedAt ?? 0) >= env.t0 + 10 * MINUTE, 'attempt 2 starts once the backoff passed');
  }),

  conformanceCase('exponential backoff grows the wait between attempts', async (env) => {
    let calls = 0;
    const wf = defineWorkflow('retry-exponential', async (ctx) =>
      ctx.step(
        'grow',
        () => {
          calls += 1;
          if (calls < 4) throw new Error('again');
          return 'done';
        },
        { retries: 3, backoff: { type: 'exponential', delay: 100, factor: 3 } },
      ),
    );
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runToEnd(handle.id);
    const observed = gaps(await w.raw.history.list(handle.id));
    assert.equal(observed.length, 3);
    for (const [i, min] of [100, 300, 900].entries()) assert.ok((observed[i] ?? 0) >= min, `gap ${i + 1} must be at least ${min} ms, got ${observed[i]}`);
  }),

  conformanceCase('queued steps make exactly as many attempts as inline ones', async (env) => {
    const calls = { inline: 0, queued: 0 };
    const make = (mode: 'inline' | 'queued') =>
      defineWorkflow(`retry-${mode}`, async (ctx) =>
        ctx.step(
          's',
          () => {
            calls[mode] += 1;
            throw new Error(mode);
          },
          { retries: 2, backoff: { type: 'fixed', delay: 50 }, queued: mode === 'queued' },
        ),
      );
    const inline = make('inline');
    const queued = make('queued');
    const w = await engineWorld(env, [inline, queued]);
    const a = await w.engine.startRun(inline, null);
    const b = await w.engine.startRun(queued, null);
    assert.equal((await w.runToEnd(a.id)).status, 'failed');
    assert.equal((await w.runToEnd(b.id)).status, 'failed');
    assert.deepEqual(calls, { inline: 3, queued: 3 });
    for (const id of [a.id, b.id]) {
      assert.deepEqual(
        (await w.raw.history.list(id)).map((x) => [x.attempt, x.status]),
        [
          [1, 'failed'],
          [2, 'failed'],
          [3, 'failed'],
        ],
      );
    }
  }),
]);
