// Retries belong to the engine alone, so a step makes the same attempts, with the same waits,
// whether its body runs inline in the orchestrator or on the step queue.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type RunRecord, type StepOptions, defineWorkflow, isTerminalRunStatus } from '@cairn/core';
import { type Fixture, codeChain, createFixture, rejectsWithCode, turns, waitForQuiet } from './helpers/engine-fixture.js';

/**
 * Moves the clock from one pending timer (retry wait, attempt timeout, dispatch backstop, lease
 * renewal) to the next, letting the engine settle in between, until the run ends.
 */
async function drive(fx: Fixture, runId: string): Promise<RunRecord> {
  for (let i = 0; i < 200; i++) {
    const run = (await waitForQuiet(fx.counter, runId))!;
    if (isTerminalRunStatus(run.status)) return run;
    if (!(await fx.clock.advanceToNextTimer())) await turns(50); // only real-time work is pending
  }
  assert.fail('run did not end');
}

interface Outcome {
  status: string;
  output: unknown;
  errorChain: string[];
  attempts: Array<[number, string]>;
  gaps: number[];
  calls: number;
}

async function runOnce(mode: 'inline' | 'queued', failures: number, options: StepOptions): Promise<Outcome> {
  let calls = 0;
  const wf = defineWorkflow('policy', async (ctx) =>
    ctx.step(
      'flaky',
      () => {
        if (++calls <= failures) throw new Error(`failure ${calls}`);
        return `ok after ${calls}`;
      },
      { ...options, queued: mode === 'queued' },
    ),
  );
  const fx = await createFixture({ workflows: [wf] });
  try {
    const h = await fx.engine.startRun(wf, null);
    const run = await drive(fx, h.id);
    const history = (await fx.engine.history(h.id)).filter((a) => a.stepKey === 'flaky');
    let errorChain: string[] = [];
    if (run.status !== 'completed') errorChain = codeChain(await rejectsWithCode(h.result(), 'RUN_FAILED'));
    return {
      status: run.status,
      output: run.output,
      errorChain,
      attempts: history.map((a) => [a.attempt, a.status]),
      gaps: history.slice(1).map((a, i) => a.startedAt - history[i]!.endedAt!),
      calls,
    };
  } finally {
    await fx.engine.stop();
  }
}

describe('inline and queued steps make the same attempts', () => {
  const cases: Array<{ label: string; failures: number; options: StepOptions; expect: Partial<Outcome> }> = [
    {
      label: 'failing twice then succeeding (retries: 3, fixed backoff)',
      failures: 2,
      options: { retries: 3, backoff: { type: 'fixed', delay: 1000 } },
      expect: {
        status: 'completed',
        output: 'ok after 3',
        attempts: [
          [1, 'failed'],
          [2, 'failed'],
          [3, 'succeeded'],
        ],
        gaps: [1000, 1000],
        calls: 3,
      },
    },
    {
      label: 'failing always (retries: 2, exponential backoff): attempts == retries + 1',
      failures: Number.POSITIVE_INFINITY,
      options: { retries: 2, backoff: { type: 'exponential', delay: 1500, factor: 3 } },
      expect: {
        status: 'failed',
        attempts: [
          [1, 'failed'],
          [2, 'failed'],
          [3, 'failed'],
        ],
        gaps: [1500, 4500],
        calls: 3,
      },
    },
    {
      label: 'failing always without retries: one attempt',
      failures: Number.POSITIVE_INFINITY,
      options: {},
      expect: { status: 'failed', attempts: [[1, 'failed']], gaps: [], calls: 1 },
    },
    {
      label: 'failing always with a timeout per attempt (retries: 1)',
      failures: 0,
      options: { retries: 1, timeout: 2000, backoff: { type: 'fixed', delay: 10 } },
      expect: {
        status: 'failed',
        attempts: [
          [1, 'failed'],
          [2, 'failed'],
        ],
        gaps: [10],
        calls: 2,
      },
    },
  ];
  for (const c of cases) {
    it(c.label, async () => {
      const options = c.options;
      const results: Record<string, Outcome> = {};
      for (const mode of ['inline', 'queued'] as const) {
        // The timeout case needs a body that never settles.
        results[mode] = c.label.includes('timeout') ? await runTimeout(mode, options) : await runOnce(mode, c.failures, options);
        for (const [key, value] of Object.entries(c.expect)) {
          assert.deepEqual(results[mode]![key as keyof Outcome], value, `${mode}: ${key}`);
        }
      }
      assert.deepEqual(results.inline, results.queued);
    });
  }

  it('a queued step reached after the handler awaited something other than the engine still runs', async () => {
    // Between steps the handler may await its own async work (a log flush, a dynamic import):
    // replaying up to the queued step must wait for it rather than declare the step unreachable.
    for (const mode of ['inline', 'queued'] as const) {
      const wf = defineWorkflow('awaits-between', async (ctx) => {
        const a = await ctx.step('a', () => 1);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return a + (await ctx.step('q', () => 41, { queued: mode === 'queued' }));
      });
      const fx = await createFixture({ workflows: [wf] });
      try {
        const h = await fx.engine.startRun(wf, null);
        const run = await drive(fx, h.id);
        assert.equal(run.status, 'completed', `${mode}: ${JSON.stringify(run.error)}`);
        assert.equal(run.output, 42);
      } finally {
        await fx.engine.stop();
      }
    }
  });
});

describe('inline and queued steps see the same workflow state', () => {
  it('a queued step reached after setState/state in the handler runs even if the state changed since', async () => {
    for (const mode of ['inline', 'queued'] as const) {
      let bodies = 0;
      const wf = defineWorkflow('stateful', async (ctx) => {
        const [first] = await Promise.all([
          (async () => {
            await ctx.setState('phase', 'charging');
            const phase = await ctx.state('phase');
            if (phase !== 'charging') return `diverged: saw ${phase}`;
            return ctx.step('charge', () => (bodies++, 'charged'), { queued: mode === 'queued' });
          })(),
          (async () => {
            await ctx.step('other', () => 'x');
            await ctx.setState('phase', 'later'); // moves on while the charge is in flight
          })(),
        ]);
        return first;
      });
      const fx = await createFixture({ workflows: [wf] });
      try {
        const h = await fx.engine.startRun(wf, null);
        const run = await drive(fx, h.id);
        assert.equal(run.status, 'completed', `${mode}: ${JSON.stringify(run.error)}`);
        assert.equal(run.output, 'charged', mode);
        assert.equal(bodies, 1, mode);
      } finally {
        await fx.engine.stop();
      }
    }
  });
});

async function runTimeout(mode: 'inline' | 'queued', options: StepOptions): Promise<Outcome> {
  let calls = 0;
  const wf = defineWorkflow('policy-timeout', async (ctx) =>
    ctx.step(
      'flaky',
      () => {
        calls++;
        return new Promise(() => {});
      },
      { ...options, queued: mode === 'queued' },
    ),
  );
  const fx = await createFixture({ workflows: [wf] });
  try {
    const h = await fx.engine.startRun(wf, null);
    const run = await drive(fx, h.id);
    const history = (await fx.engine.history(h.id)).filter((a) => a.stepKey === 'flaky');
    assert.deepEqual(
      history.map((a) => a.error?.code),
      history.map(() => 'STEP_TIMEOUT'),
    );
    return {
      status: run.status,
      output: run.output,
      errorChain: codeChain(await rejectsWithCode(h.result(), 'RUN_FAILED')),
      attempts: history.map((a) => [a.attempt, a.status]),
      gaps: history.slice(1).map((a, i) => a.startedAt - history[i]!.endedAt!),
      calls,
    };
  } finally {
    await fx.engine.stop();
  }
}
