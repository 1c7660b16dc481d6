import { CairnError, type StepRecord } from '@cairn/core';
import { toStepRecord } from '../codec/rows.js';
import { orderedArgs } from '../codec/routine-args.js';
import { stepInsertArgs, stepTransitionArgs } from '../codec/step-args.js';
import { stepIdentity } from '../codec/step-identity.js';
import { checkWritable } from '../context.js';
import type { StepWrites } from '../dialect/types.js';
import { callRoutine } from '../routines/call-routine.js';
import { STEP_INSERT_PARAMS, STEP_TRANSITION_PARAMS, routineNames } from '../routines/params.js';
import type { StepRow } from '../schema/tables.js';
import { stepConflict } from '../step-conflict.js';

/**
 * The row a step procedure returns: the step's columns flat next to `r_fence`, `r_status` (NULL:
 * no such run) and `done` (1 when the write happened); no step: `run_id` is NULL.
 */
type StepProcedureRow = Partial<StepRow> & { r_fence: unknown; r_status: unknown; done: unknown };

/** The run's fence and status (undefined: no such run), whether the write happened, the step. */
function read(row: StepProcedureRow | undefined) {
  if (row === undefined || row.r_fence === null) return { run: undefined, done: false, step: undefined };
  return { run: { fence: row.r_fence, status: row.r_status }, done: Number(row.done) === 1, step: row.run_id == null ? undefined : (row as StepRow) };
}

/**
 * MySQL/MariaDB's step writes: one call of the step procedure each, which runs the whole
 * transaction. Every commit is durable.
 *
 * `insert` through `<prefix>step_insert`: the run is locked and checked, the step inserted unless
 * its key exists, attempt 1 opened for a running step (or recorded for a finished one) — one
 * call, all or nothing; it returns the step as it stands after the call, new or existing.
 *
 * `transition` through `<prefix>step_transition`: lock and check the run, compare-and-set the step
 * on status + attempt, close the previous attempt and open the next — one call.
 */
export const mysqlStepWrites: StepWrites = {
  async insert(ctx, runId, fence, step, now) {
    const name = routineNames(ctx.names.prefix).stepInsert;
    const args = orderedArgs(STEP_INSERT_PARAMS, stepInsertArgs(stepIdentity(runId, step.key), fence, step, now, false));
    const result = read(await callRoutine<StepProcedureRow>(ctx, name, STEP_INSERT_PARAMS, args));
    checkWritable(runId, fence, result.run);
    if (result.step === undefined) throw new CairnError('STORE_ERROR', `steps.insert: step ${step.key} of run ${runId} was not returned by ${name}`);
    return { step: toStepRecord(result.step), created: result.done };
  },

  async transition(ctx, runId, fence, tr, now): Promise<StepRecord> {
    const args = orderedArgs(STEP_TRANSITION_PARAMS, stepTransitionArgs(stepIdentity(runId, tr.key), fence, tr, now));
    const result = read(await callRoutine<StepProcedureRow>(ctx, routineNames(ctx.names.prefix).stepTransition, STEP_TRANSITION_PARAMS, args));
    checkWritable(runId, fence, result.run);
    const step = result.step === undefined ? undefined : toStepRecord(result.step);
    if (!result.done || step === undefined) throw stepConflict(runId, tr.key, step);
    return step;
  },
};
