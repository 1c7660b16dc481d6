import { sql } from 'kysely';
import { CairnError, type Fence, type NewStep, type StepRecord, type StepTransition } from '@cairn/core';
import { toStepRecord } from './codec/rows.js';
import { encodeText } from './codec/text.js';
import { TERMINAL_SQL, checkWritable, first, inList, rows, type StoreContext } from './context.js';
import type { StepRow } from './schema/tables.js';
import { STEP_COLUMNS } from './schema/tables.js';
import {
  endAttemptSet,
  stepConflict,
  stepIdentity,
  stepTransitionSet,
  stepValues,
} from './steps-shared.js';

// PostgreSQL types of the step columns, in STEP_COLUMNS order: INSERT ... SELECT does not infer the
// types of bare parameters from the target columns, so each value is cast.
const STEP_TYPES = ['text', 'text', 'text', 'text', 'text', 'integer', 'text', 'integer', 'integer', 'smallint', 'text', 'text', 'bigint', 'text', 'bigint', 'bigint'];

type RunLockRow = { r_fence: string | number; r_status: string };

const fenceMatches = (fence: Fence) => (fence === null ? sql`true` : sql`r.fence = ${fence}`);

/**
 * `steps.insert` in ONE statement: the run row is share-locked (a concurrent claim waits for this
 * statement, and this statement sees a claim that committed first), its fence and status checked,
 * the step inserted unless its key exists, and attempt 1 opened for a running step. With
 * `asyncStartCommit` (default), the start of an inline step commits without waiting for the WAL
 * flush: a crash can only lose the knowledge that the attempt began, and the finish write, which
 * is durable, flushes it with itself.
 */
export async function insertStepPostgres(ctx: StoreContext, runId: string, fence: Fence, step: NewStep, now: number) {
  const { t } = ctx;
  const id = stepIdentity(runId, step.key);
  const values = stepValues(id, step, now).map((v, i) => sql`${v}::${sql.raw(STEP_TYPES[i] ?? 'text')}`);
  const asyncCommit = ctx.asyncStartCommit && step.status === 'running' ? sql`, set_config('synchronous_commit', 'off', true) as sc` : sql``;
  const worker = step.worker === undefined ? null : encodeText(step.worker);
  const found = await rows(
    ctx.db,
    sql<RunLockRow & { created: number } & Partial<StepRow>>`with r as (
        select fence, status${asyncCommit} from ${t.runs} where id = ${id.runId} for share
      ), ins as (
        insert into ${t.steps} (${sql.join(STEP_COLUMNS.map((c) => sql.id(c)))})
        select ${sql.join(values)} from r where ${fenceMatches(fence)} and r.status not in ${TERMINAL_SQL}
        on conflict (run_id, key_hash) do nothing
        returning *
      ), att as (
        insert into ${t.attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
        select run_id, key_hash, 1, step_key, seq, 'running', ${worker}::text, ${now}::bigint from ins where ins.status = 'running'
      )
      select r.fence as r_fence, r.status as r_status, 1 as created, ins.* from r cross join ins
      union all
      select r.fence, r.status, 0, s.* from r left join ${t.steps} s on s.run_id = ${id.runId} and s.key_hash = ${id.keyHash}
      where not exists (select 1 from ins)`,
  );
  const row = found[0];
  checkWritable(runId, fence, row === undefined ? undefined : { fence: row.r_fence, status: row.r_status });
  if (row === undefined) throw new CairnError('STORE_ERROR', 'unreachable');
  if (Number(row.created) === 1) return { step: toStepRecord(row as StepRow), created: true };
  // The key exists: read it in a statement of its own, which sees the latest committed version (the
  // statement's snapshot may predate it, or hold an older version of it).
  const existing = await first(ctx.db, sql<StepRow>`select * from ${t.steps} where run_id = ${id.runId} and key_hash = ${id.keyHash}`);
  if (existing === undefined) throw new CairnError('STORE_ERROR', `steps.insert: step ${step.key} of run ${runId} conflicted but cannot be read`);
  return { step: toStepRecord(existing), created: false };
}

/**
 * `steps.transition` in ONE statement: share-lock and check the run, compare-and-set the step on
 * status + attempt, close the previous attempt and open the next one — all or nothing.
 */
export async function transitionStepPostgres(ctx: StoreContext, runId: string, fence: Fence, tr: StepTransition, now: number): Promise<StepRecord> {
  const { t } = ctx;
  const id = stepIdentity(runId, tr.key);
  const ctes = [
    sql`r as (select fence, status from ${t.runs} where id = ${id.runId} for share)`,
    sql`upd as (
      update ${t.steps} set ${stepTransitionSet(tr, now)}
      where run_id = ${id.runId} and key_hash = ${id.keyHash} and status in ${inList(tr.from.status)} and attempt = ${tr.from.attempt}
        and exists (select 1 from r where ${fenceMatches(fence)} and r.status not in ${TERMINAL_SQL})
      returning *)`,
  ];
  if (tr.endAttempt) {
    ctes.push(sql`ea as (
      update ${t.attempts} set ${endAttemptSet(tr.endAttempt, now)}
      where run_id = ${id.runId} and key_hash = ${id.keyHash} and attempt = ${tr.from.attempt} and exists (select 1 from upd))`);
  }
  if (tr.startAttempt) {
    ctes.push(sql`sa as (
      insert into ${t.attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      select run_id, key_hash, attempt, step_key, seq, 'running', ${encodeText(tr.startAttempt.worker)}::text, ${now}::bigint from upd
      on conflict (run_id, key_hash, attempt) do update set status = 'running', worker = excluded.worker,
        started_at = excluded.started_at, ended_at = null, output_json = null, error_json = null)`);
  }
  const row = (
    await rows(
      ctx.db,
      sql<RunLockRow & Partial<StepRow>>`with ${sql.join(ctes)}
        select r.fence as r_fence, r.status as r_status, upd.* from r left join upd on true`,
    )
  )[0];
  checkWritable(runId, fence, row === undefined ? undefined : { fence: row.r_fence, status: row.r_status });
  if (row !== undefined && row.run_id != null) return toStepRecord(row as StepRow);
  const current = await first(ctx.db, sql<StepRow>`select * from ${t.steps} where run_id = ${id.runId} and key_hash = ${id.keyHash}`);
  throw stepConflict(runId, tr.key, current === undefined ? undefined : toStepRecord(current));
}
