import { sql } from 'kysely';
import type { Fence, NewStep, StepRecord, StepTransition } from '@cairn/core';
import { toStepRecord } from './codec/rows.js';
import { encodeText } from './codec/text.js';
import { checkWritable, first, guard, rows, type StoreContext } from './context.js';
import type { AnyKysely } from './dialect/types.js';
import { STEP_COLUMNS, type StepRow } from './schema/tables.js';
import {
  applyStepTransition,
  endAttemptSet,
  newStepRecord,
  ATTEMPT_REOPEN_COLUMNS,
  stepConflict,
  stepIdentity,
  stepTransitionSet,
  stepValues,
  type StepIdentity,
} from './steps-shared.js';
import { insertStepRoutine, transitionStepRoutine } from './steps-routines.js';

type LockedRow = Partial<StepRow> & { r_fence: unknown; r_status: unknown };

/**
 * Reads the run and the step in one statement inside the caller's transaction. Only SQLite takes
 * this path: its write transactions (`BEGIN IMMEDIATE`) are serial, so nothing changes the rows
 * between this read and the writes that follow it. The servers use the routines instead.
 */
async function readRunAndStep(ctx: StoreContext, trx: AnyKysely, id: StepIdentity): Promise<LockedRow | undefined> {
  const { t } = ctx;
  return first(
    trx,
    sql<LockedRow>`select r.fence as r_fence, r.status as r_status, s.*
      from ${t.runs} r left join ${t.steps} s on s.run_id = r.id and s.key_hash = ${id.keyHash}
      where r.id = ${id.runId}`,
  );
}

/** Inserts a step and, for a running one, attempt 1, inside the caller's transaction. */
async function writeNewStep(ctx: StoreContext, trx: AnyKysely, id: StepIdentity, step: NewStep, now: number): Promise<void> {
  const { t } = ctx;
  const values = stepValues(id, step, now);
  await sql`insert into ${t.steps} (${sql.join(STEP_COLUMNS.map((c) => sql.id(c)))}) values (${sql.join(values)})`.execute(trx);
  if (step.status === 'running') {
    await sql`insert into ${t.attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (${id.runId}, ${id.keyHash}, 1, ${id.key}, ${step.seq}, 'running',
        ${step.worker === undefined ? null : encodeText(step.worker)}, ${now})`.execute(trx);
  }
}

/** `steps.insert` as one transaction: lock + read, then insert step and attempt. */
async function insertStepTransactional(ctx: StoreContext, runId: string, fence: Fence, step: NewStep, now: number) {
  const id = stepIdentity(runId, step.key);
  return ctx.dialect.transaction(ctx.db, async (trx) => {
    const row = await readRunAndStep(ctx, trx, id);
    checkWritable(runId, fence, row === undefined ? undefined : { fence: row.r_fence, status: row.r_status });
    if (row?.run_id != null) return { step: toStepRecord(row as StepRow), created: false };
    await writeNewStep(ctx, trx, id, step, now);
    return { step: newStepRecord(runId, step, now), created: true };
  });
}

/** `steps.transition` as one transaction: lock + read, check, then write step and attempts. */
async function transitionStepTransactional(ctx: StoreContext, runId: string, fence: Fence, tr: StepTransition, now: number) {
  const { t } = ctx;
  const id = stepIdentity(runId, tr.key);
  return ctx.dialect.transaction(ctx.db, async (trx) => {
    const row = await readRunAndStep(ctx, trx, id);
    checkWritable(runId, fence, row === undefined ? undefined : { fence: row.r_fence, status: row.r_status });
    const current = row?.run_id == null ? undefined : toStepRecord(row as StepRow);
    if (current === undefined || !tr.from.status.includes(current.status) || current.attempt !== tr.from.attempt) {
      throw stepConflict(runId, tr.key, current);
    }
    const next = applyStepTransition(current, tr, now);
    await sql`update ${t.steps} set ${stepTransitionSet(tr, now)}
      where run_id = ${id.runId} and key_hash = ${id.keyHash}`.execute(trx);
    if (tr.endAttempt) {
      await sql`update ${t.attempts} set ${endAttemptSet(tr.endAttempt, now)}
        where run_id = ${id.runId} and key_hash = ${id.keyHash} and attempt = ${tr.from.attempt}`.execute(trx);
    }
    if (tr.startAttempt) {
      await sql`insert into ${t.attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
        values (${id.runId}, ${id.keyHash}, ${next.attempt}, ${id.key}, ${current.seq}, 'running',
          ${encodeText(tr.startAttempt.worker)}, ${now}, null, null, null)
        ${ctx.dialect.upsertTail(['run_id', 'key_hash', 'attempt'], ATTEMPT_REOPEN_COLUMNS)}`.execute(trx);
    }
    return next;
  });
}

/** `steps.load`: one indexed read of every step of the run, ordered by seq. */
export function loadSteps(ctx: StoreContext) {
  return (runId: string) =>
    guard('steps.load', async (): Promise<StepRecord[]> => {
      const found = await rows(ctx.db, sql<StepRow>`select * from ${ctx.t.steps} where run_id = ${encodeText(runId)} order by seq`);
      return found.map(toStepRecord);
    });
}

/**
 * `steps.insert`. PostgreSQL and MySQL/MariaDB: one call of the `step_insert` routine (one round
 * trip). SQLite: one transaction in process.
 */
export function insertStep(ctx: StoreContext) {
  return (runId: string, fence: Fence, step: NewStep, now: number) =>
    guard('steps.insert', () =>
      ctx.dialect.name === 'sqlite' ? insertStepTransactional(ctx, runId, fence, step, now) : insertStepRoutine(ctx, runId, fence, step, now),
    );
}

/**
 * `steps.transition`. PostgreSQL and MySQL/MariaDB: one call of the `step_transition` routine (one
 * round trip). SQLite: one transaction in process.
 */
export function transitionStep(ctx: StoreContext) {
  return (runId: string, fence: Fence, t: StepTransition, now: number) =>
    guard('steps.transition', () =>
      ctx.dialect.name === 'sqlite' ? transitionStepTransactional(ctx, runId, fence, t, now) : transitionStepRoutine(ctx, runId, fence, t, now),
    );
}
