import { createEngine, defineWorkflow, type Engine, type EngineOptions, type WorkflowDefinition, type WorkflowStore } from '@cairn/core';
import { sleep } from '../stats.js';

/** The body of every no-op step, and of the plain-call baseline. */
export const noop = async (): Promise<void> => {};

/** N sequential no-op steps. */
export const stepsWorkflow = defineWorkflow('bench-steps', async (ctx, n: number) => {
  for (let i = 0; i < n; i++) await ctx.step(`s${i}`, noop);
  return n;
});

/** N sequential no-op steps, then a day-long sleep: the run stays resumable for replay timing. */
export const replayWorkflow = defineWorkflow('bench-replay', async (ctx, n: number) => {
  for (let i = 0; i < n; i++) await ctx.step(`s${i}`, noop);
  await ctx.sleep('hold', '1d');
  return n;
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

export const ALL_WORKFLOWS: WorkflowDefinition<any, any>[] = [stepsWorkflow, replayWorkflow, latencyWorkflow, queuedWorkflow];

/** Quiet logger: the bench reports failures itself. */
const logger = {
  warn: (message: string, data?: Record<string, unknown>) => console.warn(`[cairn] ${message}`, data ?? ''),
  error: (message: string, data?: Record<string, unknown>) => console.error(`[cairn] ${message}`, data ?? ''),
};

/** An engine over `store` with every bench workflow; recovery effectively off (scenarios drive runs). */
export function benchEngine(store: WorkflowStore, options: Partial<EngineOptions> = {}): Engine {
  return createEngine({ store, workflows: ALL_WORKFLOWS, recoveryIntervalMs: 3_600_000, logger, ...options });
}

/** The two job groups of the fairness scenario (with `shared-groups`, a workflow's group is its name). */
export const bigGroupWorkflow = defineWorkflow('bench-big', async (ctx, workMs: number) => {
  await ctx.step('work', () => sleep(workMs));
});
export const smallGroupWorkflow = defineWorkflow('bench-small', async (ctx, workMs: number) => {
  await ctx.step('work', () => sleep(workMs));
});
ALL_WORKFLOWS.push(bigGroupWorkflow, smallGroupWorkflow);
