// Runs in every status, made by a real engine on the store under test, for the CLI to read and
// change. Names, outputs and errors of the `hostile` run carry ANSI escape sequences and control
// characters, as run data written by anyone may.
import { createEngine, defineWorkflow, NonRetryableError, type RunStatus } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';

/** Escape sequences a terminal would act on: colour, clear screen, window title, 8-bit CSI, bidi override. */
export const HOSTILE = {
  step: 'pay\u001b[31m RED \u001b[0m',
  error: 'boom \u001b]0;pwned\u0007 \u001b[2J cleared',
  output: 'out \u009b2J \u202e reversed',
  stateKey: 'k\u001b[1m',
} as const;

export interface SeededRuns {
  /** One run id per status. */
  byStatus: Record<RunStatus, string>;
  /** A completed run with a retried step, a sleep, an event, a child and a state change. */
  rich: string;
  /** Its child run. */
  child: string;
  /** The failed run whose step name, error and output carry escape sequences. */
  hostile: string;
  /** The idempotency key the rich run was started with. */
  key: string;
  /** Every run id created. */
  all: string[];
}

const child = defineWorkflow('cli-child', async (ctx, n: number) => ctx.step('double', () => n * 2));
const rich = defineWorkflow('cli-rich', async (ctx) => {
  let calls = 0;
  await ctx.step(
    'flaky',
    () => {
      calls += 1;
      if (calls === 1) throw new Error('first attempt fails');
      return 'ok';
    },
    { retries: 2, backoff: { type: 'fixed', delay: 0 } },
  );
  await ctx.setState('phase', 'charged');
  await ctx.sleep('nap', 1);
  const approval = await ctx.waitForEvent('approval');
  const doubled = await ctx.child(child, 21);
  return { approval, doubled };
});
const fails = defineWorkflow('cli-fails', async (ctx) => {
  await ctx.step('charge', () => {
    throw new NonRetryableError('card declined');
  });
});
const waits = defineWorkflow('cli-waits', async (ctx) => ctx.waitForEvent('go'));
const hostile = defineWorkflow('cli-hostile', async (ctx) => {
  await ctx.setState(HOSTILE.stateKey, HOSTILE.output);
  await ctx.step(HOSTILE.step, () => {
    throw new NonRetryableError(HOSTILE.error);
  });
});

/** The workflows the seeded runs use (for a config file that registers them). */
export const SEED_WORKFLOWS = [child, rich, fails, waits, hostile];

async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** Creates the runs with a real engine (local queue, workers) and stops it. */
export async function seedRuns(store: WorkflowStore): Promise<SeededRuns> {
  const engine = createEngine({ store, workflows: SEED_WORKFLOWS, recoveryIntervalMs: 60_000 });
  await engine.start();
  const statusOf = async (id: string) => (await store.runs.get(id))?.status;
  try {
    const key = 'order-42';
    const richRun = await engine.startRun(rich, null, { idempotencyKey: key, tags: { customer: 'c-42', plan: 'pro' } });
    await until('the rich run waits for its event', async () =>
      (await store.steps.load(richRun.id)).some((s) => s.key === 'event:approval' && s.status === 'waiting'),
    );
    await engine.sendEvent(richRun.id, 'approval', { by: 'Ada' });
    await richRun.result({ timeout: '30s' });
    const childId = (await store.steps.load(richRun.id)).find((s) => s.kind === 'child')?.childRunId as string;

    const failed = await engine.startRun(fails, null);
    const hostileRun = await engine.startRun(hostile, null, { tags: { 'k\u001b[1m': 'v\u202e' } });
    const waiting = await engine.startRun(waits, null, { tags: { customer: 'c-42' } });
    const cancelled = await engine.startRun(waits, null);
    await until('the failing runs fail', async () => (await statusOf(failed.id)) === 'failed' && (await statusOf(hostileRun.id)) === 'failed');
    await until('both waits wait', async () => (await statusOf(waiting.id)) === 'waiting' && (await statusOf(cancelled.id)) === 'waiting');
    await engine.cancel(cancelled.id, { reason: 'not needed' });
    await until('the cancel is applied', async () => (await statusOf(cancelled.id)) === 'cancelled');
    // The worker engine stops before the pending and running runs are made: a run started by an
    // engine that was never started goes through the store (due at once, signalled), and a worker
    // still running would take the pending run up and leave it waiting.
    await engine.stop({ graceMs: 0 });

    // Pending: started through an engine without workers (its queue has no consumer). Running: a
    // pending run claimed by a worker that then went silent (its lease is still valid).
    const client = createEngine({ store, workflows: SEED_WORKFLOWS });
    const pending = await client.startRun(waits, null);
    const running = await client.startRun(waits, null);
    await client.stop();
    await store.runs.claim(running.id, 'worker-gone', 3_600_000, Date.now());

    const byStatus: Record<RunStatus, string> = {
      pending: pending.id,
      running: running.id,
      waiting: waiting.id,
      completed: richRun.id,
      failed: failed.id,
      cancelled: cancelled.id,
    };
    return {
      byStatus,
      rich: richRun.id,
      child: childId,
      hostile: hostileRun.id,
      key,
      all: [richRun.id, childId, failed.id, hostileRun.id, waiting.id, cancelled.id, pending.id, running.id],
    };
  } finally {
    await engine.stop({ graceMs: 0 });
  }
}
