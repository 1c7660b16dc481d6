import { CairnError, type Fence, type NewStep, type StepRecord, type StepTransition } from '@cairn/core';
import { toStepRecord } from './codec/rows.js';
import { checkWritable, type StoreContext } from './context.js';
import type { StepWrites } from './dialect/types.js';
import { callRoutine } from './routines/call-routine.js';
import { STEP_INSERT_PARAMS, STEP_TRANSITION_PARAMS, orderedArgs, routineNames, type RoutineParam } from './routines/params.js';
import { stepInsertArgs, stepTransitionArgs } from './routines/routine-args.js';
import type { StepRow } from './schema/tables.js';
import { stepConflict, stepIdentity } from './steps-shared.js';

/** What both step routines return: the run's fence and status, whether the write happened, the step. */
export interface StepRoutineResult {
  run: { fence: unknown; status: unknown };
  done: boolean;
  step: StepRow | undefined;
}

/** The row a step routine returns, as the driver hands it over (its shape is the dialect's). */
export type StepRoutineRow = Partial<StepRow> & { r_fence: unknown; r_status: unknown; done: unknown; step?: StepRow | null };

/** How a dialect's step routines are read and called. */
export interface StepRoutineShape {
  /** Reads `done` and the step out of the routine's row (the run's fence and status are read already). */
  read(row: StepRoutineRow, run: StepRoutineResult['run']): StepRoutineResult;
  /** The routine takes `asyncStartCommit` (PostgreSQL's `synchronous_commit = off` for a start write). */
  asyncStartCommit: boolean;
  /**
   * Sends a transition's call and returns its row (default: `callRoutine`, one round trip of its
   * own); PostgreSQL sends it through its group commit line.
   */
  callTransition?(ctx: StoreContext, args: (string | number | null)[]): Promise<StepRoutineRow | undefined>;
}

/** Reads a step routine's row; `run` undefined when the run does not exist. */
function readStepRoutine(shape: StepRoutineShape, row: StepRoutineRow | undefined) {
  if (row === undefined || row.r_fence === null) return { run: undefined, done: false, step: undefined };
  return shape.read(row, { fence: row.r_fence, status: row.r_status });
}

/** Calls a step routine (one round trip) and reads its row. */
async function callStepRoutine(ctx: StoreContext, shape: StepRoutineShape, name: string, params: readonly RoutineParam[], args: (string | number | null)[]) {
  return readStepRoutine(shape, await callRoutine<StepRoutineRow>(ctx, name, params, args));
}

/**
 * The step writes through the step routines (PostgreSQL functions, MySQL/MariaDB procedures).
 *
 * `insert` through `<prefix>step_insert`: the run is locked and checked, the step inserted unless
 * its key exists, attempt 1 opened for a running step — one call, all or nothing. With
 * `asyncStartCommit` (where the dialect takes it, and the store's option, default on), a running
 * step's start commits without waiting for the WAL flush: a crash can only lose the knowledge that
 * the attempt began, and the finish write, which is durable, flushes it with itself.
 *
 * `transition` through `<prefix>step_transition`: lock and check the run, compare-and-set the step
 * on status + attempt, close the previous attempt and open the next — one call.
 */
export function routineStepWrites(shape: StepRoutineShape): StepWrites {
  return {
    async insert(ctx: StoreContext, runId: string, fence: Fence, step: NewStep, now: number) {
      const id = stepIdentity(runId, step.key);
      const asyncCommit = shape.asyncStartCommit && ctx.asyncStartCommit && step.status === 'running';
      const args = orderedArgs(STEP_INSERT_PARAMS, stepInsertArgs(id, fence, step, now, asyncCommit));
      const result = await callStepRoutine(ctx, shape, routineNames(ctx.names.prefix).stepInsert, STEP_INSERT_PARAMS, args);
      checkWritable(runId, fence, result.run);
      // Both routines return the row as it stands after the call: the new step, or the existing one.
      if (result.step === undefined)
        throw new CairnError('STORE_ERROR', `steps.insert: step ${step.key} of run ${runId} was not returned by ${routineNames(ctx.names.prefix).stepInsert}`);
      return { step: toStepRecord(result.step), created: result.done };
    },

    async transition(ctx: StoreContext, runId: string, fence: Fence, tr: StepTransition, now: number): Promise<StepRecord> {
      const id = stepIdentity(runId, tr.key);
      const args = orderedArgs(STEP_TRANSITION_PARAMS, stepTransitionArgs(id, fence, tr, now));
      const result =
        shape.callTransition === undefined
          ? await callStepRoutine(ctx, shape, routineNames(ctx.names.prefix).stepTransition, STEP_TRANSITION_PARAMS, args)
          : readStepRoutine(shape, await shape.callTransition(ctx, args));
      checkWritable(runId, fence, result.run);
      const step = result.step === undefined ? undefined : toStepRecord(result.step);
      if (!result.done || step === undefined) throw stepConflict(runId, tr.key, step);
      return step;
    },
  };
}
