import assert from 'node:assert/strict';
import { defineWorkflow, NonRetryableError, RetryAfterError, type WorkflowContext } from '@cairn/core';
import { SimulatedCrash, type FaultInjector, type FaultSite } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

const MINUTE = 60_000;

/** A business failure retrying cannot fix: keeps its own name and code in the record. */
class CardDeclined extends NonRetryableError {
  override name = 'CardDeclined';
  readonly code = 'CARD_DECLINED';
}

/** Crashes once, at the first hit of `point` for step `stepKey`. */
class CrashAtStep implements FaultInjector {
  crashed = false;
  constructor(
    private readonly point: FaultSite['point'],
    private readonly stepKey: string,
  ) {}
  hit(site: FaultSite): void {
    if (this.crashed || site.point !== this.point || site.stepKey !== this.stepKey) return;
    this.crashed = true;
    throw new SimulatedCrash(site);
  }
}

/** Steps a (compensated), b (not), c (compensated), then `last`; `done` logs each compensation. */
async function sagaSteps(ctx: WorkflowContext, done: string[]): Promise<void> {
  await ctx.step('a', () => 'a', { compensate: () => void done.push('a') });
  await ctx.step('b', () => 'b');
  await ctx.step('c', () => 'c', { compensate: () => void done.push('c') });
}

/** Engine scenarios: failures that are not retried, retryAfter, the default policy, and the saga. */
export const failuresGroup: CaseGroup = caseGroup('engine.failures', 'engine: failures and compensation', [
  conformanceCase('a non-retryable error makes exactly one attempt, inline and queued; its record keeps name, message and code', async (env) => {
    const calls = { inline: 0, queued: 0 };
    const make = (mode: 'inline' | 'queued') =>
      defineWorkflow(`non-retryable-${mode}`, async (ctx) =>
        ctx.step(
          'charge',
          () => {
            calls[mode] += 1;
            throw new CardDeclined('card declined');
          },
          { retries: 5, backoff: { type: 'fixed', delay: 10 }, queued: mode === 'queued' },
        ),
      );
    const inline = make('inline');
    const queued = make('queued');
    const w = await engineWorld(env, [inline, queued]);
    const a = await w.engine.startRun(inline, null);
    const b = await w.engine.startRun(queued, null);
    for (const handle of [a, b]) {
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'failed');
      assert.equal(run.error?.code, 'STEP_FAILED');
      assert.deepEqual([run.error?.cause?.name, run.error?.cause?.message, run.error?.cause?.code], ['CardDeclined', 'card declined', 'CARD_DECLINED']);
      const history = await w.raw.history.list(handle.id);
      assert.deepEqual(
        history.map((x) => [x.attempt, x.status, x.error?.name, x.error?.code]),
        [[1, 'failed', 'CardDeclined', 'CARD_DECLINED']],
      );
    }
    assert.deepEqual(calls, { inline: 1, queued: 1 });
  }),

  conformanceCase('retryIf decides per error whether another attempt is made, inline and queued', async (env) => {
    const calls = { inline: 0, queued: 0 };
    const make = (mode: 'inline' | 'queued') =>
      defineWorkflow(`retry-if-${mode}`, async (ctx) =>
        ctx.step(
          's',
          () => {
            calls[mode] += 1;
            throw new Error(calls[mode] === 1 ? 'transient' : 'fatal');
          },
          { retries: 5, backoff: { type: 'fixed', delay: 10 }, retryIf: (error) => error.message === 'transient', queued: mode === 'queued' },
        ),
      );
    const inline = make('inline');
    const queued = make('queued');
    const w = await engineWorld(env, [inline, queued]);
    const a = await w.engine.startRun(inline, null);
    const b = await w.engine.startRun(queued, null);
    for (const handle of [a, b]) {
      assert.equal((await w.runToEnd(handle.id)).status, 'failed');
      assert.deepEqual(
        (await w.raw.history.list(handle.id)).map((x) => [x.attempt, x.error?.message]),
        [
          [1, 'transient'],
          [2, 'fatal'],
        ],
      );
    }
    assert.deepEqual(calls, { inline: 2, queued: 2 });
  }),

  conformanceCase('retryAfter delays the next attempt by what the body asked, inline and queued', async (env) => {
    const make = (mode: 'inline' | 'queued') =>
      defineWorkflow(`retry-after-${mode}`, async (ctx) =>
        ctx.step(
          'rate-limited',
          (s) => {
            if (s.attempt === 1) throw new RetryAfterError('429 too many requests', '5m');
            return s.attempt;
          },
          { retries: 2, backoff: { type: 'fixed', delay: 10 }, queued: mode === 'queued' },
        ),
      );
    const inline = make('inline');
    const queued = make('queued');
    const w = await engineWorld(env, [inline, queued]);
    for (const wf of [inline, queued]) {
      const handle = await w.engine.startRun(wf, null);
      const run = await w.runToEnd(handle.id);
      assert.equal(run.output, 2);
      const [first, second] = await w.raw.history.list(handle.id);
      assert.equal(first?.error?.name, 'RetryAfterError');
      const gap = (second?.startedAt ?? 0) - (first?.endedAt ?? 0);
      assert.ok(gap >= 5 * MINUTE, `${wf.name}: attempt 2 starts 5 minutes after attempt 1, not after the 10 ms backoff (gap ${gap} ms)`);
    }
  }),

  conformanceCase("the engine's default retry policy applies to steps that set none", async (env) => {
    const calls = { defaulted: 0, own: 0 };
    const wf = defineWorkflow('default-retry', async (ctx) => {
      await ctx
        .step(
          'own',
          () => {
            calls.own += 1;
            throw new Error('own');
          },
          { retries: 0 },
        )
        .catch(() => undefined);
      return ctx.step('defaulted', () => {
        calls.defaulted += 1;
        throw new Error('defaulted');
      });
    });
    const w = await engineWorld(env, [wf], { defaultRetry: { retries: 2, backoff: { type: 'fixed', delay: 10 } } });
    const handle = await w.engine.startRun(wf, null);
    assert.equal((await w.runToEnd(handle.id)).status, 'failed');
    assert.deepEqual(calls, { defaulted: 3, own: 1 });
  }),

  conformanceCase('a failed run compensates its completed steps in reverse order, each once; the failed step is not compensated', async (env) => {
    const done: string[] = [];
    const wf = defineWorkflow('saga-failure', async (ctx) => {
      await sagaSteps(ctx, done);
      await ctx.step(
        'd',
        () => {
          throw new NonRetryableError('no');
        },
        { compensate: () => void done.push('d') },
      );
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'STEP_FAILED');
    assert.deepEqual(done, ['c', 'a']);
    const steps = await w.raw.steps.load(handle.id);
    assert.deepEqual(
      steps
        .filter((s) => s.key.endsWith(':compensate'))
        .map((s) => [s.key, s.status])
        .sort(),
      [
        ['a:compensate', 'succeeded'],
        ['c:compensate', 'succeeded'],
      ],
    );
    const history = await w.raw.history.list(handle.id);
    assert.equal(history.filter((x) => x.stepKey === 'c:compensate').length, 1);
    await rejectsWithCode(handle.result(), 'RUN_FAILED');
  }),

  conformanceCase('a failing compensation is recorded and named in the run error; the others still run', async (env) => {
    const done: string[] = [];
    const wf = defineWorkflow('saga-failing-compensation', async (ctx) => {
      await ctx.step('a', () => 'a', { compensate: () => void done.push('a') });
      await ctx.step('b', () => 'b', {
        compensate: () => {
          throw new Error('refund service down');
        },
      });
      throw new Error('handler gave up');
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.message, 'handler gave up');
    assert.deepEqual(done, ['a']);
    const failed = (run.error?.data as { compensationFailures?: { key: string; error: { message: string } }[] } | undefined)?.compensationFailures;
    assert.deepEqual(
      failed?.map((f) => [f.key, f.error.message]),
      [['b:compensate', 'refund service down']],
    );
    const steps = await w.raw.steps.load(handle.id);
    assert.equal(steps.find((s) => s.key === 'b:compensate')?.status, 'failed');
    assert.equal(steps.find((s) => s.key === 'a:compensate')?.status, 'succeeded');
  }),

  conformanceCase('a run cancelled while it waits compensates its completed steps in reverse order', async (env) => {
    const done: string[] = [];
    const wf = defineWorkflow('saga-cancel', async (ctx) => {
      await sagaSteps(ctx, done);
      await ctx.waitForEvent('never');
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    assert.deepEqual(done, []);
    await w.engine.cancel(handle.id, { reason: 'customer changed their mind' });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'cancelled');
    assert.deepEqual(done, ['c', 'a']);
    const steps = await w.raw.steps.load(handle.id);
    assert.deepEqual(
      steps
        .filter((s) => s.key.endsWith(':compensate'))
        .map((s) => [s.key, s.status])
        .sort(),
      [
        ['a:compensate', 'succeeded'],
        ['c:compensate', 'succeeded'],
      ],
    );
    await rejectsWithCode(handle.result(), 'RUN_CANCELLED');
  }),

  conformanceCase('a crash during compensation: each compensation is recorded once and the saga finishes', async (env) => {
    for (const point of ['after-step-body', 'before-checkpoint', 'after-checkpoint'] as const) {
      for (const key of ['c:compensate', 'a:compensate']) {
        const done: string[] = [];
        const wf = defineWorkflow('saga-crash', async (ctx) => {
          await sagaSteps(ctx, done);
          throw new NonRetryableError('give up');
        });
        const faults = new CrashAtStep(point, key);
        const w = await engineWorld(env, [wf], { faults });
        const handle = await w.engine.startRun(wf, null);
        await w.runUntil(`a crash at ${point} of ${key}`, async () => faults.crashed);
        await w.engine.stop();
        await w.startEngine([wf]);
        const run = await w.runToEnd(handle.id);
        const where = `crash at ${point} of ${key}`;
        assert.equal(run.status, 'failed', where);
        const steps = await w.raw.steps.load(handle.id);
        assert.deepEqual(
          steps
            .filter((s) => s.key.endsWith(':compensate'))
            .map((s) => [s.key, s.status])
            .sort(),
          [
            ['a:compensate', 'succeeded'],
            ['c:compensate', 'succeeded'],
          ],
          where,
        );
        const history = await w.raw.history.list(handle.id);
        for (const k of ['a:compensate', 'c:compensate'])
          assert.equal(history.filter((x) => x.stepKey === k && x.status === 'succeeded').length, 1, `${where}: ${k} succeeded once`);
        // At least once: a body whose result was not recorded runs again; a recorded one never does.
        assert.equal(done.filter((d) => d === 'c').length, point === 'after-checkpoint' || key === 'a:compensate' ? 1 : 2, `${where}: c ran ${done.join(',')}`);
        assert.ok(done.indexOf('c') < done.lastIndexOf('a'), `${where}: reverse order ${done.join(',')}`);
        await env.store.runs.delete(handle.id);
      }
    }
  }),

  conformanceCase('a cancel saga interrupted by a crash finishes after restart; each compensation is recorded once', async (env) => {
    for (const point of ['after-step-body', 'before-checkpoint', 'after-checkpoint'] as const) {
      const done: string[] = [];
      const wf = defineWorkflow('saga-cancel-crash', async (ctx) => {
        await sagaSteps(ctx, done);
        await ctx.waitForEvent('never');
      });
      const faults = new CrashAtStep(point, 'c:compensate');
      const w = await engineWorld(env, [wf], { faults });
      const handle = await w.engine.startRun(wf, null);
      await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
      await w.engine.cancel(handle.id);
      await w.runUntil(`a crash at ${point} of c:compensate`, async () => faults.crashed);
      await w.engine.stop();
      await w.startEngine([wf]);
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'cancelled', point);
      const history = await w.raw.history.list(handle.id);
      for (const k of ['a:compensate', 'c:compensate'])
        assert.equal(history.filter((x) => x.stepKey === k && x.status === 'succeeded').length, 1, `${point}: ${k} succeeded once`);
      assert.deepEqual(
        done.filter((d) => d === 'a'),
        ['a'],
        `${point}: ${done.join(',')}`,
      );
      assert.equal(done[done.length - 1], 'a', `${point}: reverse order ${done.join(',')}`);
      await env.store.runs.delete(handle.id);
    }
  }),

  conformanceCase('a step still running when the run fails is made final first: it never succeeds after the saga, and is not compensated', async (env) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const done: string[] = [];
    const wf = defineWorkflow('saga-pending-branch', async (ctx) => {
      await ctx.step('first', () => 1, { compensate: () => void done.push('first') });
      await Promise.all([
        ctx.step(
          'slow',
          async () => {
            await gate; // ignores its signal on purpose
            return 'late';
          },
          { compensate: () => void done.push('slow') },
        ),
        ctx.step('fail', () => {
          throw new NonRetryableError('no');
        }),
      ]);
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    release();
    await w.settle();
    assert.equal(run.status, 'failed');
    assert.deepEqual(done, ['first']);
    const steps = await w.raw.steps.load(handle.id);
    const slow = steps.find((s) => s.key === 'slow');
    assert.equal(slow?.status, 'failed', 'the pending step was failed with the run error');
    assert.equal(slow?.error?.code, 'STEP_FAILED');
    assert.equal(
      steps.some((s) => s.key === 'slow:compensate'),
      false,
    );
    assert.deepEqual(
      (await w.raw.history.list(handle.id)).filter((x) => x.stepKey === 'slow').map((x) => x.status),
      ['abandoned'],
    );
  }),

  conformanceCase('a run past its deadline compensates, and a compensation retried after a long backoff finishes without spinning', async (env) => {
    const done: string[] = [];
    const wf = defineWorkflow('saga-deadline', async (ctx) => {
      await ctx.step('a', () => 'a', {
        retries: 1,
        backoff: { type: 'fixed', delay: '10s' },
        compensate: () => {
          done.push('a');
          if (done.length === 1) throw new Error('refund service busy');
        },
      });
      await ctx.waitForEvent('never');
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null, { deadline: '1m' });
    const executions = () => w.store.count('runs.claim', handle.id);
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    const before = executions();
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'DEADLINE_EXCEEDED');
    assert.deepEqual(done, ['a', 'a']);
    const history = await w.raw.history.list(handle.id);
    assert.deepEqual(
      history.filter((x) => x.stepKey === 'a:compensate').map((x) => x.status),
      ['failed', 'succeeded'],
    );
    assert.ok(executions() - before <= 3, `claims after the deadline: ${executions() - before}`);
  }),

  conformanceCase('a retryIf or compensate that is not a function is INVALID_INPUT at the call, and nothing is recorded for it', async (env) => {
    const codes: string[] = [];
    const wf = defineWorkflow('failures-bad-options', async (ctx) => {
      for (const options of [{ retryIf: 5 }, { compensate: 'undo' }, { retryIf: 'always' }]) {
        await ctx.step('bad', () => 1, options as never).catch((error: { code?: string }) => codes.push(error.code ?? 'none'));
      }
      return ctx.step('good', () => 2, { retryIf: () => true, compensate: () => undefined });
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 2);
    assert.deepEqual(codes, ['INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT']);
    assert.deepEqual(
      (await w.raw.steps.load(handle.id)).map((s) => s.key),
      ['good'],
    );
  }),
]);
