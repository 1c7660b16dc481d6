import { sql, type RawBuilder } from 'kysely';
import { isTerminalRunStatus, type DueRun, type RunRecord, type RunTransition } from '@cairn/core';
import { encodeJson, toText } from './codec/json.js';
import { toRunRecord } from './codec/rows.js';
import { decodeText, encodeText } from './codec/text.js';
import {
  TERMINAL_SQL,
  affected,
  guard,
  inList,
  leaseLost,
  rows,
  runConflict,
  runNotFound,
  type StoreContext,
} from './context.js';
import { callRoutine } from './routines/call-routine.js';
import { RUN_CLAIM_PARAMS, RUN_RENEW_PARAMS, RUN_REQUEST_CANCEL_PARAMS, RUN_TRANSITION_PARAMS, orderedArgs, routineNames, type RoutineArgs, type RoutineParam } from './routines/params.js';
import { readRun } from './runs.js';
import type { RunRow } from './schema/tables.js';

/**
 * MySQL/MariaDB: a run write through its procedure (one round trip). `done` says whether the
 * compare-and-set matched; `run` is the run as it is after the call (undefined: no such run).
 */
async function runRoutine<P extends readonly RoutineParam[]>(ctx: StoreContext, name: string, params: P, args: RoutineArgs<P>) {
  const row = await callRoutine<RunRow & { done: unknown }>(ctx, name, params, orderedArgs(params, args));
  return { done: row !== undefined && Number(row.done) === 1, run: row === undefined ? undefined : toRunRecord(row) };
}

/**
 * Runs a single-row compare-and-set `UPDATE` of a run and returns the row it wrote, or undefined
 * when it matched nothing. One statement with `RETURNING` on PostgreSQL and SQLite; on MySQL the
 * update and the read-back share one transaction, so the row read is exactly the one written.
 */
async function updateRun(ctx: StoreContext, runId: string, update: RawBuilder<unknown>): Promise<RunRecord | undefined> {
  if (ctx.dialect.returning) {
    const [row] = await rows(ctx.db, sql<RunRow>`${update} returning *`);
    return row === undefined ? undefined : toRunRecord(row);
  }
  return ctx.dialect.transaction(ctx.db, async (trx) => ((await affected(trx, update)) === 0 ? undefined : readRun(ctx, trx, runId)));
}

// `wake_at` lowered to `now` (never raised). MySQL evaluates SET assignments left to right, so every
// statement assigns `due_at` first, while the columns it reads still hold their old values.
const lowered = (now: number) => sql`case when wake_at is null or wake_at > ${now} then ${now} else wake_at end`;

/** `runs.claim`: one atomic compare-and-set `UPDATE`; of N racing claimers exactly one matches. */
export function claimRun(ctx: StoreContext) {
  return (runId: string, owner: string, leaseMs: number, now: number) =>
    guard('runs.claim', async () => {
      const expiresAt = now + leaseMs;
      const ownerText = encodeText(owner);
      if (ctx.dialect.name === 'mysql') {
        const { done, run } = await runRoutine(ctx, routineNames(ctx.names.prefix).runClaim, RUN_CLAIM_PARAMS, {
          p_run_id: encodeText(runId),
          p_owner: ownerText,
          p_expires_at: expiresAt,
          p_now: now,
        });
        return done ? run : undefined;
      }
      return updateRun(
        ctx,
        runId,
        sql`update ${ctx.t.runs} set due_at = ${expiresAt}, status = 'running', fence = fence + 1,
            lease_owner = ${ownerText}, lease_expires_at = ${expiresAt}, wake_at = null, updated_at = ${now}
          where id = ${encodeText(runId)} and status not in ${TERMINAL_SQL}
            and (lease_owner is null or lease_expires_at <= ${now} or lease_owner = ${ownerText})`,
      );
    });
}

/** `runs.renew`: extends the lease of the current fence holder; `LEASE_LOST` otherwise. */
export function renewRun(ctx: StoreContext) {
  return (runId: string, fence: number, leaseMs: number, now: number) =>
    guard('runs.renew', async () => {
      const expiresAt = now + leaseMs;
      if (ctx.dialect.name === 'mysql') {
        const result = await runRoutine(ctx, routineNames(ctx.names.prefix).runRenew, RUN_RENEW_PARAMS, {
          p_run_id: encodeText(runId),
          p_fence: fence,
          p_expires_at: expiresAt,
          p_now: now,
        });
        if (result.done && result.run) return result.run;
        throw leaseLost(runId, fence, result.run?.fence ?? -1);
      }
      const run = await updateRun(
        ctx,
        runId,
        sql`update ${ctx.t.runs} set due_at = ${expiresAt}, lease_expires_at = ${expiresAt}, updated_at = ${now}
          where id = ${encodeText(runId)} and fence = ${fence} and status not in ${TERMINAL_SQL} and lease_owner is not null`,
      );
      if (run === undefined) {
        throw leaseLost(runId, fence, (await readRun(ctx, ctx.db, runId))?.fence ?? -1);
      }
      return run;
    });
}

/** The SET list of a run status transition (see `RunStore.transition`). */
function transitionSet(t: RunTransition, now: number): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  if (t.to === 'waiting') {
    const wake = t.wakeAt === undefined ? sql`wake_at` : sql`case when wake_at is null or wake_at > ${t.wakeAt} then ${t.wakeAt} else wake_at end`;
    parts.push(sql`due_at = ${wake}`, sql`wake_at = ${wake}`);
  } else if (t.to === 'pending') {
    parts.push(sql`due_at = wake_at`);
  } else if (t.to === 'running') {
    parts.push(sql`due_at = lease_expires_at`);
  } else {
    parts.push(sql`due_at = null`, sql`wake_at = null`);
    if (t.output !== undefined) parts.push(sql`output_json = ${encodeJson(t.output)}`);
    if (t.error !== undefined) parts.push(sql`error_json = ${encodeJson(t.error as never)}`);
  }
  parts.push(sql`status = ${t.to}`);
  if (t.to !== 'running') parts.push(sql`lease_owner = null`, sql`lease_expires_at = null`);
  parts.push(sql`updated_at = ${now}`);
  return sql.join(parts);
}

/** `runs.transition`: compare-and-set on fence + status; on a miss, one read says why. */
export function transitionRun(ctx: StoreContext) {
  return (runId: string, fence: number, t: RunTransition, now: number) =>
    guard('runs.transition', async () => {
      let current: RunRecord | undefined;
      if (ctx.dialect.name === 'mysql') {
        const terminal = isTerminalRunStatus(t.to);
        const result = await runRoutine(ctx, routineNames(ctx.names.prefix).runTransition, RUN_TRANSITION_PARAMS, {
          p_run_id: encodeText(runId),
          p_fence: fence,
          p_from_statuses: t.from.join(','),
          p_to: t.to,
          p_wake_at: t.to === 'waiting' ? (t.wakeAt ?? null) : null,
          p_set_output: terminal && t.output !== undefined ? 1 : 0,
          p_output: terminal && t.output !== undefined ? encodeJson(t.output) : null,
          p_set_error: terminal && t.error !== undefined ? 1 : 0,
          p_error: terminal && t.error !== undefined ? encodeJson(t.error as never) : null,
          p_now: now,
        });
        if (result.done && result.run) return result.run;
        current = result.run;
      } else {
        const run = await updateRun(
          ctx,
          runId,
          sql`update ${ctx.t.runs} set ${transitionSet(t, now)}
            where id = ${encodeText(runId)} and fence = ${fence} and status in ${inList(t.from)} and status not in ${TERMINAL_SQL}`,
        );
        if (run !== undefined) return run;
        current = await readRun(ctx, ctx.db, runId);
      }
      if (current === undefined) throw runNotFound(runId);
      if (current.fence !== fence) throw leaseLost(runId, fence, current.fence);
      if (isTerminalRunStatus(current.status)) throw runConflict(runId, current.status);
      throw runConflict(runId, current.status, t.from);
    });
}

/** The SET list of a wake-up: `wake_at = min(wake_at, now)`; pending/waiting runs become due. */
export function wakeSet(now: number): RawBuilder<unknown> {
  return sql`due_at = case when status in ('pending', 'waiting') then ${lowered(now)} else due_at end,
    wake_at = ${lowered(now)}, updated_at = ${now}`;
}

/** `runs.wake`: one unfenced `UPDATE`; a no-op on missing or terminal runs. */
export function wakeRun(ctx: StoreContext) {
  return (runId: string, now: number) =>
    guard('runs.wake', async () => {
      await sql`update ${ctx.t.runs} set ${wakeSet(now)} where id = ${encodeText(runId)} and status not in ${TERMINAL_SQL}`.execute(ctx.db);
    });
}

/** `runs.requestCancel`: sets `cancel_requested` and wakes the run in one `UPDATE`. */
export function requestCancel(ctx: StoreContext) {
  return (runId: string, now: number, reason?: string) =>
    guard('runs.requestCancel', async () => {
      const reasonText = reason === undefined ? null : encodeText(reason);
      if (ctx.dialect.name === 'mysql') {
        // The run after the request, or as it is when it was already terminal; undefined if missing.
        return (await runRoutine(ctx, routineNames(ctx.names.prefix).runRequestCancel, RUN_REQUEST_CANCEL_PARAMS, { p_run_id: encodeText(runId), p_reason: reasonText, p_now: now })).run;
      }
      // The first request's reason is kept: SET reads the old cancel_requested (PostgreSQL, SQLite).
      const run = await updateRun(
        ctx,
        runId,
        sql`update ${ctx.t.runs} set ${wakeSet(now)}, cancel_reason = case when cancel_requested = 0 then ${reasonText} else cancel_reason end, cancel_requested = 1
          where id = ${encodeText(runId)} and status not in ${TERMINAL_SQL}`,
      );
      return run ?? readRun(ctx, ctx.db, runId);
    });
}

/**
 * `runs.findDue`: one range scan of the `due_at` index. `due_at` is maintained by every write:
 * `wake_at` for pending/waiting runs, the lease expiry for running ones, NULL for terminal ones.
 * PostgreSQL and MySQL skip rows another worker has locked (being claimed) rather than wait.
 */
export function findDue(ctx: StoreContext) {
  return (now: number, limit: number) =>
    guard('runs.findDue', async (): Promise<DueRun[]> => {
      if (!Number.isInteger(limit) || limit < 1) return [];
      const found = await rows(
        ctx.db,
        sql<Pick<RunRow, 'id' | 'workflow' | 'status'>>`select id, workflow, status from ${ctx.t.runs}
          where due_at <= ${now} order by due_at, id limit ${limit} ${ctx.dialect.skipLocked()}`,
      );
      return found.map((row) => ({
        id: decodeText(toText(row.id)),
        workflow: decodeText(toText(row.workflow)),
        reason: row.status === 'running' ? 'lease-expired' : 'wake',
      }));
    });
}
