import { CairnError } from '@cairn/core';
import { toStepRecord } from '../codec/rows.js';
import { checkWritable } from '../context.js';
import type { StepWrites } from '../dialect/types.js';
import { orderedArgs, STEP_INSERT_PARAMS } from '../routines/params.js';
import { stepInsertArgs } from '../routines/routine-args.js';
import type { StepRow } from '../schema/tables.js';
import { routineStepWrites } from '../steps-routines.js';
import { stepIdentity } from '../steps-shared.js';
import { insertedStepRecord } from './inserted-step-record.js';
import { stepInsertV2Name } from './step-insert-v2-routine.js';
import { stepWriteLines } from './step-write-batches.js';

// What `step_insert_v2` returns when it did not write the step (NULL when it did).
interface NotWritten {
  fence?: unknown;
  status?: unknown;
  step?: StepRow | null;
}

const { transition } = routineStepWrites({
  read: (row, run) => ({ run, done: row.done === true, step: row.step ?? undefined }),
  asyncStartCommit: true,
  callTransition: (ctx, args) => stepWriteLines(ctx).transition.submit(args),
});

/**
 * PostgreSQL's step writes, one function call each.
 *
 * `insert` calls `<prefix>step_insert_v2` (`cairn_0012_step_insert_v2`): the run share-locked and
 * checked, the step inserted unless its key exists, attempt 1 opened or recorded — one statement,
 * all or nothing; a running step's start with `synchronous_commit = off` under `asyncStartCommit`.
 * When it wrote the step the function returns NULL and the record is built here from the very
 * values the INSERT took (`insertedStepRecord`), so it equals the stored row as `steps.load` reads
 * it; otherwise it
 * returns the run's fence and status (`LEASE_LOST`, `RUN_NOT_FOUND`, … by `checkWritable`) or the
 * existing step (`created: false`).
 *
 * `transition` calls `<prefix>step_transition` (`cairn_0008_step_finished`), which returns the step.
 *
 * Both go through the store's group commit lines (`stepWriteLines`): a write that finds the line
 * free goes out alone at once, as described; writes that arrive while a statement is in flight go
 * out together as one statement of the same calls, one transaction (decision 60).
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
  transition,
};
