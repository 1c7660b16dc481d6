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
  reopensSameAttempt,
  stepConflict,
  stepIdentity,
  stepTransitionSet,
  stepValues,
  type StepIdentity,
} from './steps-shared.js';
import { insertStepPostgres, transitionStepPostgres } from './steps-postgres.js';

type LockedRow = Partial<StepRow> & { r_fence: unknown; r_status: unknown };

/**
 * Locks the run row (exclusive, inside the caller's transaction) and reads it with the step in one
 * statement. Every step and state write of a run takes this lock (or, on PostgreSQL's one-statement
 * path, a share lock on it) before touching its rows, so writers of one run never deadlock and a
 * claim can never slip between a fence check and the write it guards.
 */
async function lockRunAndStep(ctx: StoreContext, trx: AnyKysely, id: StepIdentity): Promise<LockedRow | undefined> {
  const { t, dialect } = ctx;
  if (dialect.name === 'postgres') {
    // PostgreSQL re-reads only the locked row after waiting for a lock (READ COMMITTED): a step row
    // joined in the same statement could be a stale version. Read it in a statement of its own.
    const run = await first(trx, sql<{ fence: unknown; status: unknown }>`select fence, status from ${t.runs} where id = ${id.runId} for update`);
    if (run === undefined) return undefined;
    const step = await first(trx, sql<StepRow>`select * from ${t.steps} where run_id = ${id.runId} and key_hash = ${id.keyHash}`);
    return { ...step, r_fence: run.fence, r_status: run.status };
  }
  // MySQL's locking read returns (and locks) the latest version of both rows; SQLite is serial.
  return first(
    trx,
    sql<LockedRow>`select r.fence as r_fence, r.status as r_status, s.*
      from ${t.runs} r left join ${t.steps} s on s.run_id = r.id and s.key_hash = ${id.keyHash}
      where r.id = ${id.runId} ${dialect.lockForUpdate()}`,
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
    const row = await lockRunAndStep(ctx, trx, id);
    checkWritable(runId, fence, row === undefined ? undefined : { fence: row.r_fence, status: row.r_status });
    if (row?.run_id != null) return { step: toStepRecord(row as StepRow), created: false };
    await writeNewStep(ctx, trx, id, step, now);
    return { step: newStepRecord(runId, step, now), created: true };
  });
}

/** `steps.transition` as one transaction: lock + read, check, then write step and attempts. */
export async function transitionStepTransactional(ctx: StoreContext, runId: string, fence: Fence, tr: StepTransition, now: number) {
  const { t } = ctx;
  const id = stepIdentity(runId, tr.key);
  return ctx.dialect.transaction(ctx.db, async (trx) => {
    const row = await lockRunAndStep(ctx, trx, id);
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
 * `steps.insert`. PostgreSQL: one statement (share-lock and fence check of the run, insert of the
 * step and of attempt 1). MySQL and SQLite: one transaction.
 */
export function insertStep(ctx: StoreContext) {
  return (runId: string, fence: Fence, step: NewStep, now: number) =>
    guard('steps.insert', () =>
      ctx.dialect.name === 'postgres' ? insertStepPostgres(ctx, runId, fence, step, now) : insertStepTransactional(ctx, runId, fence, step, now),
    );
}

/**
 * `steps.transition`. PostgreSQL: one statement (fence check, compare-and-set of the step, attempt
 * records). MySQL and SQLite: one transaction.
 */
export function transitionStep(ctx: StoreContext) {
  return (runId: string, fence: Fence, t: StepTransition, now: number) =>
    guard('steps.transition', () =>
      ctx.dialect.name === 'postgres' && !reopensSameAttempt(t)
        ? transitionStepPostgres(ctx, runId, fence, t, now)
        : transitionStepTransactional(ctx, runId, fence, t, now),
    );
}
