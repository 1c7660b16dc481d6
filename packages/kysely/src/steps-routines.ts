import { CairnError, type Fence, type NewStep, type StepRecord, type StepTransition } from '@cairn/core';
import { toStepRecord } from './codec/rows.js';
import { checkWritable, type StoreContext } from './context.js';
import { callRoutine } from './routines/call-routine.js';
import { STEP_INSERT_PARAMS, STEP_TRANSITION_PARAMS, orderedArgs, routineNames, type RoutineParam } from './routines/params.js';
import { stepInsertArgs, stepTransitionArgs } from './routines/routine-args.js';
import type { StepRow } from './schema/tables.js';
import { stepConflict, stepIdentity } from './steps-shared.js';

/** What both step routines return: the run's fence and status, whether the write happened, the step. */
interface RoutineResult {
  run: { fence: unknown; status: unknown } | undefined;
  done: boolean;
  step: StepRow | undefined;
}

type StepRoutineRow = Partial<StepRow> & { r_fence: unknown; r_status: unknown; done: unknown; step?: StepRow | null };

/**
 * Calls a step routine (one round trip). PostgreSQL returns the step as JSON in `step`; MySQL
 * returns its columns flat next to `r_fence`, `r_status` and `done`.
 */
async function callStepRoutine(ctx: StoreContext, name: string, params: readonly RoutineParam[], args: (string | number | null)[]): Promise<RoutineResult> {
  const row = await callRoutine<StepRoutineRow>(ctx, name, params, args);
  if (row === undefined || row.r_fence === null) return { run: undefined, done: false, step: undefined };
  const run = { fence: row.r_fence, status: row.r_status };
  if (ctx.dialect.name === 'postgres') return { run, done: row.done === true, step: row.step ?? undefined };
  return { run, done: Number(row.done) === 1, step: row.run_id == null ? undefined : (row as StepRow) };
}

/**
 * `steps.insert` through `<prefix>step_insert`: the run is locked and checked, the step inserted
 * unless its key exists, attempt 1 opened for a running step — one call, all or nothing. With
 * `asyncStartCommit` (PostgreSQL, default), a running step's start commits without waiting for the
 * WAL flush: a crash can only lose the knowledge that the attempt began, and the finish write,
 * which is durable, flushes it with itself.
 */
export async function insertStepRoutine(ctx: StoreContext, runId: string, fence: Fence, step: NewStep, now: number) {
  const id = stepIdentity(runId, step.key);
  const asyncCommit = ctx.dialect.name === 'postgres' && ctx.asyncStartCommit && step.status === 'running';
  const args = orderedArgs(STEP_INSERT_PARAMS, stepInsertArgs(id, fence, step, now, asyncCommit));
  const result = await callStepRoutine(ctx, routineNames(ctx.names.prefix).stepInsert, STEP_INSERT_PARAMS, args);
  checkWritable(runId, fence, result.run);
  // Both routines return the row as it stands after the call: the new step, or the existing one.
  if (result.step === undefined) throw new CairnError('STORE_ERROR', `steps.insert: step ${step.key} of run ${runId} was not returned by ${routineNames(ctx.names.prefix).stepInsert}`);
  return { step: toStepRecord(result.step), created: result.done };
}

/**
 * `steps.transition` through `<prefix>step_transition`: lock and check the run, compare-and-set
 * the step on status + attempt, close the previous attempt and open the next — one call.
 */
export async function transitionStepRoutine(ctx: StoreContext, runId: string, fence: Fence, tr: StepTransition, now: number): Promise<StepRecord> {
  const id = stepIdentity(runId, tr.key);
  const args = orderedArgs(STEP_TRANSITION_PARAMS, stepTransitionArgs(id, fence, tr, now));
  const result = await callStepRoutine(ctx, routineNames(ctx.names.prefix).stepTransition, STEP_TRANSITION_PARAMS, args);
  checkWritable(runId, fence, result.run);
  const step = result.step === undefined ? undefined : toStepRecord(result.step);
  if (!result.done || step === undefined) throw stepConflict(runId, tr.key, step);
  return step;
}
