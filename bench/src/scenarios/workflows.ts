import { createEngine, defineWorkflow, type Engine, type EngineOptions, type AnyWorkflowDefinition } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { sleep } from '../stats.js';

/** The body of every no-op step, and of the plain-call baseline. */
export const noop = async (): Promise<void> => {};

/** N sequential no-op steps. */
export const stepsWorkflow = defineWorkflow('bench-steps', async (ctx, n: number) => {
  for (let i = 0; i < n; i++) await ctx.step(`s${i}`, noop);
  return n;
});

/** N sequential no-op steps, then a day-long sleep: the run stays resumable for replay timing. */
/** One `steps`-step inline run of `stepsWorkflow` on `engine`, from `startRun` to its result. */
export async function inlineRun(engine: Engine, steps: number): Promise<void> {
  await (await engine.startRun(stepsWorkflow, steps, { mode: 'inline' })).result();
}

export const replayWorkflow = defineWorkflow('bench-replay', async (ctx, n: number) => {
  for (let i = 0; i < n; i++) await ctx.step(`s${i}`, noop);
  await ctx.sleep('hold', '1d');
  return n;
});

/**
 * Wake cost (issue 30): `steps` no-op steps, then `waits` waits for the event `poke`, each
 * followed by nothing (the next wait), so every wake records one step and suspends again.
 */
export const wakeWorkflow = defineWorkflow('bench-wake', async (ctx, input: { steps: number; waits: number }) => {
  for (let i = 0; i < input.steps; i++) await ctx.step(`s${i}`, noop);
  for (let i = 0; i < input.waits; i++) await ctx.waitForEvent('poke');
  return input.waits;
});

/** One step that takes `ms` (a run that ends at an arbitrary moment, for result latency). */
export const latencyWorkflow = defineWorkflow('bench-latency', async (ctx, ms: number) => {
  await ctx.step('work', () => sleep(ms));
  return ms;
});

/** A short queued run: `n` no-op steps (throughput, fairness). */
export const queuedWorkflow = defineWorkflow('bench-queued', async (ctx, input: { steps: number; workMs?: number }) => {
  for (let i = 0; i < input.steps; i++) await ctx.step(`s${i}`, input.workMs ? () => sleep(input.workMs as number) : noop);
  return input.steps;
});

/** Pickup across processes: the worker's clock when the run's first step ran (same machine as the submitter). */
export const pickupWorkflow = defineWorkflow('bench-pickup', async (ctx) => ctx.step('at', () => Date.now()));

/** Event delivery across processes: waits for `go`, then the worker's clock when the next step ran. */
export const eventPickupWorkflow = defineWorkflow('bench-event-pickup', async (ctx) => {
  await ctx.waitForEvent('go');
  return ctx.step('at', () => Date.now());
});

export const ALL_WORKFLOWS: AnyWorkflowDefinition[] = [
  stepsWorkflow,
  replayWorkflow,
  wakeWorkflow,
  latencyWorkflow,
  queuedWorkflow,
  pickupWorkflow,
  eventPickupWorkflow,
];

/** What engines logged: executions abandoned (store or queue errors), and other warnings. */
export const engineLog = { abandoned: 0, warnings: 0, last: '' };

function describe(data: Record<string, unknown> | undefined): string {
  const error = data?.['err'];
  if (error instanceof Error) return `${error.message}`;
  return data ? JSON.stringify(data).slice(0, 300) : '';
}

/** One line per engine complaint (no stacks): the bench counts them and reports them per scenario. */
const logger = {
  warn: (data: Record<string, unknown>, message: string) => {
    engineLog.warnings += 1;
    engineLog.last = `${message}: ${describe(data)}`;
    process.stderr.write(`[cairn] warn: ${engineLog.last}\n`);
  },
  error: (data: Record<string, unknown>, message: string) => {
    if (/abandoned/.test(message)) engineLog.abandoned += 1;
    engineLog.last = `${message}: ${describe(data)}`;
    process.stderr.write(`[cairn] error: ${engineLog.last}\n`);
  },
};

/**
 * An engine over `store` with every bench workflow. By default recovery is effectively off and
 * leases are long (the counting scenarios drive every execution themselves); `recovering: true` turns it on with a short
 * lease, as the queued scenarios need when an execution is abandoned (a deadlock, a lost job).
 */
export function benchEngine(store: WorkflowStore, options: Partial<EngineOptions> & { recovering?: boolean } = {}): Engine {
  const { recovering, ...rest } = options;
  // Without recovery the lease is an hour long, so no renewal (a time-driven write, every third of
  // the lease) lands inside a counted execution: the counts are those of the steps alone.
  const recovery: Partial<EngineOptions> = recovering
    ? { recoveryIntervalMs: 1000, timings: { leaseMs: 5000, startGraceMs: 5000 } }
    : { recoveryIntervalMs: 3_600_000, timings: { leaseMs: 3_600_000 } };
  return createEngine({ store, workflows: ALL_WORKFLOWS, logger, ...recovery, ...rest });
}

/** The two job groups of the fairness scenario (with `shared-groups`, a workflow's group is its name). */
export const bigGroupWorkflow = defineWorkflow('bench-big', async (ctx, workMs: number) => {
  await ctx.step('work', () => sleep(workMs));
});
export const smallGroupWorkflow = defineWorkflow('bench-small', async (ctx, workMs: number) => {
  await ctx.step('work', () => sleep(workMs));
});
ALL_WORKFLOWS.push(bigGroupWorkflow, smallGroupWorkflow);
