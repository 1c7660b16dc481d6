import { createEngine, defineWorkflow, type AnyWorkflowDefinition, type Engine, type RunStatus } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { noop } from '../scenarios/workflows.js';

/** Steps in every loaded run on the SQL stores (10,000,000 steps for a million runs). */
export const STEPS_PER_RUN = 10;

/**
 * Steps in every loaded run on Redis by default (`--redis-steps` changes it), which holds
 * everything in memory: ten steps are 24 keys a run (about 10 KB), 10 GB for a million runs, more
 * than this shared machine can spare; ten steps are measured at fewer runs.
 */
export const REDIS_STEPS_PER_RUN = 1;

/** Distinct values of the `customer` tag of the loaded SQL runs: 50 runs each at a million, spread over the whole load. */
export const CUSTOMERS = 20_000;

/**
 * The tags of loaded run `n` on the SQL stores: a `customer` with many distinct values (`c-0` …
 * `c-19999`, each customer's runs spread evenly over the 30 days) and a `plan` with three
 * (`free` 60 %, `pro` 30 %, `enterprise` 10 %, independent of status and workflow). The loaders
 * compute the same on the server (`sql-loader.ts`); this is the reference the bench checks against.
 */
export function scaleTags(n: number): { customer: string; plan: string } {
  const p = Math.floor(n / 3) % 10;
  return { customer: `c-${(n * 7919) % CUSTOMERS}`, plan: p < 6 ? 'free' : p < 9 ? 'pro' : 'enterprise' };
}

/** The loaded runs spread over this many workflows (`scale-w0` … `scale-w9`): a workflow filter selects a tenth. */
export const WORKFLOW_COUNT = 10;

/**
 * A finished run as the engine leaves it: ten recorded inline steps with small outputs, then a
 * result (`completed`), a thrown error (`failed`), or a wait that a cancel ends (`cancelled`).
 */
const body = async (ctx: Parameters<Parameters<typeof defineWorkflow>[1]>[0], input: { end: RunStatus; steps?: number }) => {
  for (let i = 0; i < (input.steps ?? STEPS_PER_RUN); i++) await ctx.step(`s${i}`, () => ({ i, ok: true }));
  if (input.end === 'failed') throw new Error('the order could not be charged');
  if (input.end === 'cancelled') await ctx.waitForEvent('never');
  return { steps: STEPS_PER_RUN, total: 4200 };
};

/** `scale-w0` … `scale-w9`, one body. */
export const SCALE_WORKFLOWS: AnyWorkflowDefinition[] = Array.from({ length: WORKFLOW_COUNT }, (_, i) => defineWorkflow(`scale-w${i}`, body));

/** The measured workflow: `n` inline no-op steps. */
export const measuredSteps = defineWorkflow('scale-steps', async (ctx, n: number) => {
  for (let i = 0; i < n; i++) await ctx.step(`s${i}`, noop);
  return n;
});

/** The statuses of the loaded runs and how many of every 100 have each. */
export const STATUS_MIX: ReadonlyArray<{ status: 'completed' | 'failed' | 'cancelled'; per100: number }> = [
  { status: 'completed', per100: 95 },
  { status: 'failed', per100: 4 },
  { status: 'cancelled', per100: 1 },
];

/** The status `STATUS_MIX` gives loaded run `n` (by `n mod 100`). */
export function statusOf(n: number): 'completed' | 'failed' | 'cancelled' {
  let bound = 0;
  for (const { status, per100 } of STATUS_MIX) {
    bound += per100;
    if (n % 100 < bound) return status;
  }
  throw new Error('STATUS_MIX does not add up to 100');
}

/** An engine over the store with the scale workflows; no workers, no recovery timer (the bench calls `recover()` itself). */
export function scaleEngine(store: WorkflowStore): Engine {
  return createEngine({
    store,
    workflows: [...SCALE_WORKFLOWS, measuredSteps],
    recoveryIntervalMs: 3_600_000,
    timings: { leaseMs: 3_600_000 },
    logger: { warn: () => {}, error: (data, message) => process.stderr.write(`[cairn] error: ${message} ${JSON.stringify(data).slice(0, 300)}\n`) },
  });
}

/**
 * Makes one real run of each loaded status through the engine, with `steps` steps and, when
 * given, start tags (the rows every loaded run is cloned from) and returns their ids by status. The engine must have been started with workers.
 */
export async function makeTemplates(
  engine: Engine,
  steps: number,
  tags?: Record<string, string>,
): Promise<Record<'completed' | 'failed' | 'cancelled', string>> {
  const wf = SCALE_WORKFLOWS[0]!;
  const options = { mode: 'inline' as const, ...(tags === undefined ? {} : { tags }) };
  const done = await engine.startRun(wf, { end: 'completed', steps }, options);
  await done.result();
  const failed = await engine.startRun(wf, { end: 'failed', steps }, options);
  await failed.result().catch(() => {});
  const waiting = await engine.startRun(wf, { end: 'cancelled', steps }, options);
  // Cancelled once it waits, after its ten steps (an inline start returns before the run ends).
  for (let i = 0; (await engine.getRun(waiting.id))?.status !== 'waiting'; i++) {
    if (i > 3000) throw new Error(`template run ${waiting.id} never reached waiting`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await engine.cancel(waiting.id, { reason: 'customer left' });
  // The cancel is finished by the run's next execution, on the engine's workers.
  await engine.result(waiting.id, { timeout: '30s' }).catch(() => {});
  const cancelled = await engine.getRun(waiting.id);
  if (cancelled?.status !== 'cancelled') throw new Error(`template run ${waiting.id} is ${cancelled?.status}, not cancelled`);
  return { completed: done.id, failed: failed.id, cancelled: waiting.id };
}
