import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, type WorkflowContext, type AnyWorkflowDefinition, defineWorkflow } from '@cairn/core';
import { ManualClock } from '@cairn/core/testing';
import { codeChain, countingStore, createFixture, rejectsWithCode, turns, until, waitForIdle, waitForStatus, waitForStep } from './helpers/engine-fixture.js';

const MODES = ['inline', 'queued'] as const;

describe('steps: results are recorded once and replayed', () => {
  it('a step body runs once across replays, and replays see its recorded output', async () => {
    const runs = { a: 0, b: 0 };
    const seen: unknown[] = [];
    const wf = defineWorkflow('replay-once', async (ctx) => {
      const a = await ctx.step('a', () => {
        runs.a++;
        return { n: 1 };
      });
      seen.push(a);
      await ctx.sleep('nap', 1000);
      const b = await ctx.step('b', () => {
        runs.b++;
        return a.n + 1;
      });
      await ctx.sleep('nap2', 1000);
      return { a, b };
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const fx = await createFixture({ workflows: [wf], stickyExecutions: false });
    try {
      const h = await fx.engine.startRun(wf, null);
      const waiting = await waitForIdle(fx.inner, h.id);
      assert.equal(waiting.status, 'waiting');
      await fx.clock.advance(1000);
      await waitForIdle(fx.inner, h.id);
      await fx.clock.advance(1000);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.deepEqual(await h.result(), { a: { n: 1 }, b: 2 });
      assert.deepEqual(runs, { a: 1, b: 1 });
      // Three executions (start, after nap, after nap2): each saw the same recorded value.
      assert.equal(fx.counter.count('runs.claim'), 3);
      assert.deepEqual(seen, [{ n: 1 }, { n: 1 }, { n: 1 }]);
    } finally {
      await fx.engine.stop();
    }
  });

  it('now(), random() and uuid() are recorded: a replay sees the values of the first execution', async () => {
    const seen: unknown[][] = [];
    const wf = defineWorkflow('recorded-values', async (ctx) => {
      const values = [await ctx.now(), await ctx.random(), await ctx.uuid()];
      seen.push(values);
      await ctx.sleep('nap', 1000);
      return values;
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const fx = await createFixture({ workflows: [wf], stickyExecutions: false });
    try {
      const start = fx.clock.now();
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      await fx.clock.advance(1000);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(seen.length, 2);
      assert.deepEqual(seen[1], seen[0]);
      assert.equal(seen[0]![0], start);
      assert.ok(typeof seen[0]![1] === 'number' && seen[0]![1] >= 0 && seen[0]![1] < 1);
      assert.match(String(seen[0]![2]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.deepEqual(await h.result(), seen[0]);
    } finally {
      await fx.engine.stop();
    }
  });

  for (const mode of MODES) {
    it(`falsy and null outputs round-trip exactly through result() and a replay (${mode} steps)`, async () => {
      const VALUES: unknown[] = [0, false, '', null, undefined, { a: 0, b: false, c: '', d: null }, [null, 0]];
      const observed = new Map<number, unknown[]>();
      const wf = defineWorkflow(`falsy-${mode}`, async (ctx, input: { i: number }) => {
        const v = await ctx.step('v', () => VALUES[input.i], { queued: mode === 'queued' });
        observed.set(input.i, [...(observed.get(input.i) ?? []), v]);
        await ctx.sleep('nap', 1000); // forces a replay of `v`
        const again = await ctx.step('echo', () => v, { queued: mode === 'queued' });
        observed.get(input.i)!.push(again);
        return v;
      });
      // About the replay: every wake replays (a kept execution would resume without one, decision 64).
      const fx = await createFixture({ workflows: [wf], stickyExecutions: false });
      try {
        const ids: string[] = [];
        for (let i = 0; i < VALUES.length; i++) ids.push((await fx.engine.startRun(wf, { i })).id);
        for (const id of ids) await waitForIdle(fx.inner, id);
        await fx.clock.advance(1000);
        for (const id of ids) await waitForStatus(fx.inner, id, ['completed', 'failed'], 50_000);
        for (let i = 0; i < VALUES.length; i++) {
          const expected = VALUES[i];
          const id = ids[i]!;
          const out = await fx.engine.result(id);
          assert.deepStrictEqual(out, expected, `result() of value #${i}`);
          const run = await fx.inner.runs.get(id);
          assert.equal('output' in run!, expected !== undefined, `run.output presence for #${i}`);
          const step = (await fx.inner.steps.load(id)).find((s) => s.key === 'v')!;
          assert.equal(step.status, 'succeeded');
          assert.equal('output' in step, expected !== undefined, `step.output presence for #${i}`);
          // First execution, replay (after the sleep), and the value echoed by a later step.
          const seen = observed.get(i)!;
          assert.ok(seen.length >= 3, `value #${i} observed ${seen.length} times`);
          for (const v of seen) assert.deepStrictEqual(v, expected, `value #${i} as the handler saw it`);
        }
      } finally {
        await fx.engine.stop();
      }
    });

    it(`a non-JSON step output fails the step with NOT_SERIALIZABLE, without retries (${mode})`, async () => {
      const bodies: Record<string, number> = { fn: 0, bigint: 0, map: 0 };
      const outputs: Record<string, () => unknown> = { fn: () => () => 1, bigint: () => 10n, map: () => new Map([[1, 2]]) };
      const wf = defineWorkflow(`not-json-${mode}`, async (ctx, input: { kind: string }) => {
        return ctx.step(
          'bad',
          () => {
            bodies[input.kind]!++;
            return outputs[input.kind]!();
          },
          { retries: 3, backoff: { type: 'fixed', delay: 10 }, queued: mode === 'queued' },
        );
      });
      const fx = await createFixture({ workflows: [wf] });
      try {
        for (const kind of Object.keys(outputs)) {
          const h = await fx.engine.startRun(wf, { kind });
          await waitForStatus(fx.inner, h.id, ['failed', 'completed']);
          const err = await rejectsWithCode(fx.engine.result(h.id), 'RUN_FAILED');
          assert.deepEqual(codeChain(err), ['RUN_FAILED', 'STEP_FAILED', 'NOT_SERIALIZABLE'], kind);
          const [step] = await fx.inner.steps.load(h.id);
          assert.equal(step!.status, 'failed');
          assert.equal(step!.error?.code, 'NOT_SERIALIZABLE');
          assert.equal(step!.attempt, 1, `${kind}: no retry`);
          const history = await fx.engine.history(h.id);
          assert.deepEqual(
            history.map((a) => [a.stepKey, a.attempt, a.status]),
            [['bad', 1, 'failed']],
          );
          assert.equal(bodies[kind], 1, `${kind}: the body ran once`);
        }
      } finally {
        await fx.engine.stop();
      }
    });
  }

  it('step names are validated before anything is recorded', async () => {
    const codes: string[] = [];
    const bad: Array<[string, (ctx: WorkflowContext) => Promise<unknown>]> = [
      ['empty', (ctx) => ctx.step('', () => 1)],
      ['too long', (ctx) => ctx.step('x'.repeat(501), () => 1)],
      ['occurrence suffix', (ctx) => ctx.step('a#2', () => 1)],
      ['compensate suffix', (ctx) => ctx.step('a:compensate', () => 1)],
      ['not a string', (ctx) => ctx.step(42 as unknown as string, () => 1)],
      ['body not a function', (ctx) => ctx.step('nobody', 5 as unknown as () => number)],
      ['sleep name', (ctx) => ctx.sleep('', 10)],
    ];
    let bodies = 0;
    const wf = defineWorkflow('names', async (ctx) => {
      for (const [label, call] of bad) {
        try {
          await call(ctx);
          codes.push(`${label}: accepted`);
        } catch (error) {
          codes.push(`${label}: ${(error as CairnError).code}`);
        }
      }
      return ctx.step('x'.repeat(500), () => ++bodies);
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      assert.equal(await h.result(), 1);
      assert.deepEqual(
        codes,
        bad.map(([label]) => `${label}: INVALID_INPUT`),
      );
      // The invalid calls consumed no key and no position.
      const steps = await fx.inner.steps.load(h.id);
      assert.deepEqual(
        steps.map((s) => [s.key.length, s.seq]),
        [[500, 0]],
      );
    } finally {
      await fx.engine.stop();
    }
  });

  it('Promise.all over steps keeps deterministic keys and positions, whatever order bodies finish in', async () => {
    const bodies: string[] = [];
    const seen: unknown[][] = [];
    const wf = defineWorkflow('parallel', async (ctx) => {
      const first = await Promise.all([
        ctx.step('a', async () => {
          await turns(5); // finishes last
          bodies.push('a');
          return 1;
        }),
        ctx.step('a', () => {
          bodies.push('a#2');
          return 2;
        }),
        ctx.step(
          'b',
          async () => {
            await turns(2);
            bodies.push('b');
            return 3;
          },
          { queued: true },
        ),
      ]);
      seen.push(first);
      await ctx.sleep('nap', 1000);
      const second = await Promise.all([ctx.step('a', () => (bodies.push('a#3'), 4)), ctx.step('b', () => (bodies.push('b#2'), 5))]);
      return [...first, ...second];
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      await fx.clock.advance(1000);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.deepEqual(await h.result(), [1, 2, 3, 4, 5]);
      const steps = await fx.inner.steps.load(h.id);
      assert.deepEqual(
        steps.map((s) => [s.key, s.name, s.seq, s.kind, s.output ?? null]),
        [
          ['a', 'a', 0, 'task', 1],
          ['a#2', 'a', 1, 'task', 2],
          ['b', 'b', 2, 'task', 3],
          ['nap', 'nap', 3, 'sleep', null],
          ['a#3', 'a', 4, 'task', 4],
          ['b#2', 'b', 5, 'task', 5],
        ],
      );
      assert.deepEqual([...bodies].sort(), ['a', 'a#2', 'a#3', 'b', 'b#2']);
      // Every execution saw the first batch in call order.
      for (const batch of seen) assert.deepEqual(batch, [1, 2, 3]);
    } finally {
      await fx.engine.stop();
    }
  });

  for (const mode of MODES) {
    it(`a step that exceeds its timeout fails with STEP_TIMEOUT, each attempt (${mode})`, async () => {
      const signals: AbortSignal[] = [];
      const wf = defineWorkflow(`timeout-${mode}`, async (ctx) => {
        return ctx.step(
          'slow',
          (s) => {
            signals.push(s.signal);
            return new Promise(() => {}); // never settles
          },
          { timeout: '5s', retries: 1, backoff: { type: 'fixed', delay: 100 }, queued: mode === 'queued' },
        );
      });
      const fx = await createFixture({ workflows: [wf] });
      try {
        const h = await fx.engine.startRun(wf, null);
        // Inline, the first attempt's start is recorded only once the body outlasts
        // `recordStartAfterMs` (during the advance below); queued, the worker records it first.
        if (mode === 'inline') await until(async () => signals.length === 1, 'first attempt started');
        else await waitForStep(fx.inner, h.id, 'slow', 'running');
        await turns(10);
        await fx.clock.advance(5000);
        await waitForStep(fx.inner, h.id, 'slow', 'retry_wait');
        await turns(10);
        await fx.clock.advance(100);
        await until(async () => (await fx.inner.steps.load(h.id))[0]?.attempt === 2, 'second attempt');
        await waitForStep(fx.inner, h.id, 'slow', 'running');
        await turns(10);
        await fx.clock.advance(5000);
        await waitForStatus(fx.inner, h.id, 'failed');
        const err = await rejectsWithCode(fx.engine.result(h.id), 'RUN_FAILED');
        assert.deepEqual(codeChain(err), ['RUN_FAILED', 'STEP_FAILED', 'STEP_TIMEOUT']);
        const history = await fx.engine.history(h.id);
        assert.deepEqual(
          history.map((a) => [a.attempt, a.status, a.error?.code]),
          [
            [1, 'failed', 'STEP_TIMEOUT'],
            [2, 'failed', 'STEP_TIMEOUT'],
          ],
        );
        assert.equal(signals.length, 2);
        for (const signal of signals) {
          assert.equal(signal.aborted, true, 'the attempt signal is aborted on timeout');
          assert.ok(CairnError.is(signal.reason, 'STEP_TIMEOUT'));
        }
      } finally {
        await fx.engine.stop();
      }
    });
  }
});

describe('steps: retries and backoff', () => {
  const cases = [
    {
      label: 'fixed backoff (longer than inlineRetryMaxMs: the run suspends between attempts)',
      retries: 3,
      backoff: { type: 'fixed' as const, delay: 5000 },
      delays: [5000, 5000, 5000],
    },
    {
      label: 'exponential backoff with a cap (short waits in place, long ones suspended)',
      retries: 5,
      backoff: { type: 'exponential' as const, delay: 500, factor: 2, maxDelay: 5000 },
      delays: [500, 1000, 2000, 4000, 5000],
    },
    {
      label: 'fixed backoff, short (waited in place)',
      retries: 2,
      backoff: { type: 'fixed' as const, delay: 250 },
      delays: [250, 250],
    },
  ];
  for (const mode of MODES) {
    for (const c of cases) {
      it(`${c.label} (${mode}): attempts == retries + 1, delays as configured`, async () => {
        let calls = 0;
        const wf = defineWorkflow('retry', async (ctx) =>
          ctx.step(
            'flaky',
            () => {
              calls++;
              throw new Error(`attempt ${calls} failed`);
            },
            { retries: c.retries, backoff: c.backoff, queued: mode === 'queued' },
          ),
        );
        const fx = await createFixture({ workflows: [wf] });
        try {
          const h = await fx.engine.startRun(wf, null);
          for (let attempt = 1; attempt <= c.retries; attempt++) {
            const step = await waitForStep(fx.inner, h.id, 'flaky', 'retry_wait');
            assert.equal(step.attempt, attempt);
            assert.equal(step.wakeAt! - fx.clock.now(), c.delays[attempt - 1], `recorded wait after attempt ${attempt}`);
            await turns(10);
            await fx.clock.advance(c.delays[attempt - 1]!);
            await until(async () => (await fx.inner.steps.load(h.id))[0]!.attempt === attempt + 1, `attempt ${attempt + 1}`);
          }
          await waitForStatus(fx.inner, h.id, 'failed');
          const history = (await fx.engine.history(h.id)).filter((a) => a.stepKey === 'flaky');
          assert.equal(history.length, c.retries + 1);
          assert.equal(calls, c.retries + 1);
          assert.deepEqual(
            history.map((a) => [a.attempt, a.status]),
            history.map((_, i) => [i + 1, 'failed']),
          );
          const gaps = history.slice(1).map((a, i) => a.startedAt - history[i]!.endedAt!);
          assert.deepEqual(gaps, c.delays);
          const [step] = await fx.inner.steps.load(h.id);
          assert.equal(step!.maxAttempts, c.retries + 1);
          assert.equal(step!.error?.message, `attempt ${c.retries + 1} failed`);
        } finally {
          await fx.engine.stop();
        }
      });
    }
  }

  it('a step that succeeds on a retry returns its value and stops retrying', async () => {
    let calls = 0;
    const wf = defineWorkflow('retry-ok', async (ctx) =>
      ctx.step(
        'flaky',
        () => {
          if (++calls < 3) throw new Error('not yet');
          return 'ok';
        },
        { retries: 5, backoff: { type: 'fixed', delay: 10 } },
      ),
    );
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForStep(fx.inner, h.id, 'flaky', 'retry_wait');
      await turns(5);
      await fx.clock.advance(10);
      await until(async () => (await fx.inner.steps.load(h.id))[0]!.attempt === 2, 'attempt 2');
      await waitForStep(fx.inner, h.id, 'flaky', 'retry_wait');
      await turns(5);
      await fx.clock.advance(10);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 'ok');
      assert.equal(calls, 3);
      assert.deepEqual(
        (await fx.engine.history(h.id)).map((a) => a.status),
        ['failed', 'failed', 'succeeded'],
      );
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('steps: compensation', () => {
  it('a failed step is not compensated itself; when the run fails, succeeded steps are, once, with the run error, and not again on replay', async () => {
    let charges = 0;
    const compensations: string[] = [];
    const caught: string[][] = [];
    const wf = defineWorkflow('saga', async (ctx) => {
      await ctx.step('reserve', () => 'reserved', {
        compensate: (error) => {
          compensations.push(`reserve: ${error.message}`);
          return 'released';
        },
      });
      try {
        await ctx.step(
          'charge',
          () => {
            charges++;
            throw new Error('card declined');
          },
          {
            retries: 2,
            backoff: { type: 'fixed', delay: 10 },
            compensate: (error) => {
              compensations.push(`charge: ${error.message}`);
            },
          },
        );
      } catch (error) {
        caught.push(codeChain(error));
      }
      await ctx.sleep('nap', 1000); // forces a replay past the failed step
      throw new Error('order abandoned');
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const fx = await createFixture({ workflows: [wf], stickyExecutions: false });
    try {
      const h = await fx.engine.startRun(wf, null);
      for (let i = 0; i < 2; i++) {
        await waitForStep(fx.inner, h.id, 'charge', 'retry_wait');
        await turns(5);
        await fx.clock.advance(10);
        await until(async () => (await fx.inner.steps.load(h.id)).find((s) => s.key === 'charge')!.attempt === i + 2, 'next attempt');
      }
      await waitForIdle(fx.inner, h.id);
      assert.deepEqual(compensations, [], 'a caught step failure compensates nothing');
      await fx.clock.advance(1000);
      await waitForStatus(fx.inner, h.id, 'failed');
      assert.equal(charges, 3);
      assert.deepEqual(compensations, ['reserve: order abandoned']);
      assert.deepEqual(caught, [
        ['STEP_FAILED', '(Error)'],
        ['STEP_FAILED', '(Error)'],
      ]);
      const steps = await fx.inner.steps.load(h.id);
      assert.equal(
        steps.some((s) => s.key === 'charge:compensate'),
        false,
      );
      const comp = steps.find((s) => s.key === 'reserve:compensate');
      assert.equal(comp?.status, 'succeeded');
      assert.equal(comp?.output, 'released');
      const history = await fx.engine.history(h.id);
      assert.equal(history.filter((a) => a.stepKey === 'reserve:compensate').length, 1);
    } finally {
      await fx.engine.stop();
    }
  });

  it('does not run when the step succeeds (even after a retry)', async () => {
    let compensations = 0;
    let calls = 0;
    const wf = defineWorkflow('saga-ok', async (ctx) => {
      const v = await ctx.step(
        'charge',
        () => {
          if (++calls === 1) throw new Error('transient');
          return 'charged';
        },
        { retries: 1, backoff: { type: 'fixed', delay: 10 }, compensate: () => void compensations++ },
      );
      await ctx.sleep('nap', 1000);
      return v;
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForStep(fx.inner, h.id, 'charge', 'retry_wait');
      await turns(5);
      await fx.clock.advance(10);
      await waitForIdle(fx.inner, h.id);
      await fx.clock.advance(1000);
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.equal(await h.result(), 'charged');
      assert.equal(compensations, 0);
      assert.equal(
        (await fx.inner.steps.load(h.id)).some((s) => s.key.endsWith(':compensate')),
        false,
      );
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('steps: non-determinism', () => {
  const original = (bodies: string[]) =>
    defineWorkflow('nd', async (ctx) => {
      const a = await ctx.step('a', () => (bodies.push('a'), 1));
      await ctx.sleep('nap', 1000);
      const b = await ctx.step('b', () => (bodies.push('b'), 2));
      return a + b;
    });
  const changed: Record<string, (bodies: string[]) => AnyWorkflowDefinition> = {
    'a different step name at a recorded position': (bodies) =>
      defineWorkflow('nd', async (ctx) => {
        const a = await ctx.step('a2', () => (bodies.push('a2'), 100));
        await ctx.sleep('nap', 1000);
        return a + (await ctx.step('b', () => (bodies.push('b'), 2)));
      }),
    'the same key with another kind': (bodies) =>
      defineWorkflow('nd', async (ctx) => {
        await ctx.sleep('a', 5);
        await ctx.sleep('nap', 1000);
        return ctx.step('b', () => (bodies.push('b'), 2));
      }),
    'recorded steps in another order': (bodies) =>
      defineWorkflow('nd', async (ctx) => {
        await ctx.sleep('nap', 1000);
        const a = await ctx.step('a', () => (bodies.push('a'), 1));
        return a + (await ctx.step('b', () => (bodies.push('b'), 2)));
      }),
    'recorded steps no longer reached (the new code returns early)': (bodies) =>
      defineWorkflow('nd', async (ctx) => {
        await ctx.step('a', () => (bodies.push('a'), 1));
        return 'early';
      }),
    'recorded steps no longer reached (the new code throws early)': (bodies) =>
      defineWorkflow('nd', async (ctx) => {
        await ctx.step('a', () => (bodies.push('a'), 1));
        throw new Error('gave up');
      }),
    'an inserted step (the handler even catches the error)': (bodies) =>
      defineWorkflow('nd', async (ctx) => {
        const a = await ctx.step('a', () => (bodies.push('a'), 1));
        try {
          await ctx.step('new', () => (bodies.push('new'), 50));
        } catch {
          return 'swallowed';
        }
        await ctx.sleep('nap', 1000);
        return a + (await ctx.step('b', () => (bodies.push('b'), 2)));
      }),
  };
  for (const [label, make] of Object.entries(changed)) {
    it(`replaying with changed code (${label}) fails the run with NON_DETERMINISM, not a wrong value`, async () => {
      const clock = new ManualClock();
      const counter = countingStore();
      const oldBodies: string[] = [];
      const newBodies: string[] = [];
      const first = await createFixture({ workflows: [original(oldBodies)], clock, counter, workerId: 'old' });
      const h = await first.engine.startRun('nd', null);
      await waitForIdle(counter.inner, h.id);
      await first.engine.stop();
      const second = await createFixture({ workflows: [make(newBodies)], clock, counter, workerId: 'new' });
      try {
        await clock.advance(1000);
        assert.equal(await second.engine.recover(), 1);
        const run = await waitForStatus(counter.inner, h.id, ['failed', 'completed']);
        assert.equal(run.status, 'failed', `output: ${JSON.stringify(run.output)}`);
        assert.equal(run.error?.code, 'NON_DETERMINISM');
        const err = await rejectsWithCode(second.engine.result(h.id), 'RUN_FAILED');
        assert.deepEqual(codeChain(err), ['RUN_FAILED', 'NON_DETERMINISM']);
        assert.deepEqual(oldBodies, ['a']);
        assert.deepEqual(newBodies, [], 'no body of the changed code ran');
        // Nothing was recorded past the mismatch.
        assert.deepEqual(
          (await counter.inner.steps.load(h.id)).map((s) => [s.key, s.status]),
          [
            ['a', 'succeeded'],
            ['nap', 'waiting'],
          ],
        );
      } finally {
        await second.engine.stop();
      }
    });
  }
});
