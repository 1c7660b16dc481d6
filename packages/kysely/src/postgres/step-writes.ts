import { CairnError, type StepRecord } from '@cairn/core';
import { toStepRecord } from '../codec/rows.js';
import { orderedArgs } from '../codec/routine-args.js';
import { stepInsertArgs, stepTransitionArgs } from '../codec/step-args.js';
import { stepIdentity } from '../codec/step-identity.js';
import { checkWritable } from '../context.js';
import type { StepWrites } from '../dialect/types.js';
import { STEP_INSERT_PARAMS, STEP_TRANSITION_PARAMS } from '../routines/params.js';
import type { StepRow } from '../schema/tables.js';
import { stepConflict } from '../step-conflict.js';
import { insertedStepRecord } from './inserted-step-record.js';
import { stepInsertV2Name } from './step-insert-v2-routine.js';
import { stepWriteLines } from './step-write-batches.js';

// What `step_insert_v2` returns when it did not write the step (NULL when it did).
interface NotWritten {
  fence?: unknown;
  status?: unknown;
  step?: StepRow | null;
}

/**
 * PostgreSQL's step writes, one function call each, both by one route: the arguments in their
 * stored forms (`codec/`), the store's group commit line for the write (`stepWriteLines`: a write
 * that finds the line free goes out alone at once; writes that arrive while a statement is in
 * flight go out together as one statement of the same calls, one transaction, decision 60), the
 * call sent by `postgresRoutineCalls.send`, then the function's answer read here.
 *
 * `insert` calls `<prefix>step_insert_v2` (`cairn_0012_step_insert_v2`): the run share-locked and
 * checked, the step inserted unless its key exists, attempt 1 opened or recorded — one statement,
 * all or nothing; a running step's start with `synchronous_commit = off` under `asyncStartCommit`
 * (a crash can only lose the knowledge that the attempt began; the finish write, durable, flushes
 * it with itself). When it wrote the step the function returns NULL and the record is built here
 * from the very values the INSERT took (`insertedStepRecord`), so it equals the stored row as
 * `steps.load` reads it; otherwise it returns the run's fence and status (`LEASE_LOST`,
 * `RUN_NOT_FOUND`, … by `checkWritable`) or the existing step (`created: false`).
 *
 * `transition` calls `<prefix>step_transition` (`cairn_0008_step_finished`): the run locked and
 * checked, the step compare-and-set on status + attempt, the previous attempt closed and the next
 * opened — one call, which returns the run's fence and status and the step (`STEP_CONFLICT` when
 * it did not match).
 */
export const postgresStepWrites: StepWrites = {
  async insert(ctx, runId, fence, step, now) {
    const args = stepInsertArgs(stepIdentity(runId, step.key), fence, step, now, ctx.asyncStartCommit && step.status === 'running');
    const result = (await stepWriteLines(ctx).insert.submit(orderedArgs(STEP_INSERT_PARAMS, args))) as NotWritten | null | undefined;
    if (result === null) return { step: insertedStepRecord(runId, fence, step, now, args.p_output, args.p_error), created: true };
    // `{}` (or, never, no row): the run does not exist.
    checkWritable(runId, fence, result?.fence === undefined ? undefined : { fence: result.fence, status: result.status });
    if (result?.step == null)
      throw new CairnError('STORE_ERROR', `steps.insert: step ${step.key} of run ${runId} was not returned by ${stepInsertV2Name(ctx.names.prefix)}`);
    return { step: toStepRecord(result.step), created: false };
  },

  async transition(ctx, runId, fence, tr, now): Promise<StepRecord> {
    const args = stepTransitionArgs(stepIdentity(runId, tr.key), fence, tr, now);
    const row = await stepWriteLines(ctx).transition.submit(orderedArgs(STEP_TRANSITION_PARAMS, args));
    // No row (a statement of several writes: a row of NULLs) when the run does not exist.
    checkWritable(runId, fence, row === undefined || row.r_fence === null ? undefined : { fence: row.r_fence, status: row.r_status });
    const stepRow = row?.step;
    const record = stepRow == null ? undefined : toStepRecord(stepRow);
    if (row?.done !== true || record === undefined) throw stepConflict(runId, tr.key, record);
    return record;
  },
};
