import { sql, type RawBuilder } from 'kysely';
import { isTerminalRunStatus } from '@cairn/core';
import type { DueRun, RunTransition } from '@cairn/core/backend';
import { toText } from './codec/json.js';
import { decodeText, encodeText } from './codec/text.js';
import { TERMINAL_SQL, guard, leaseLost, rows, runConflict, runNotFound, type StoreContext } from './context.js';
import { keepSet, promiseSet, wakeSet } from './run-wake-set.js';
import { PAUSED_COLUMN, PROMISED_COLUMN, PROMISES_COLUMN } from './schema/added-columns.js';
import { lacksColumn } from './schema/lacks-column.js';
import type { RunRow } from './schema/tables.js';

/** `runs.claim`: one atomic compare-and-set; of N racing claimers exactly one matches. */
export function claimRun(ctx: StoreContext) {
  return (runId: string, owner: string, leaseMs: number, now: number) => guard('runs.claim', () => ctx.dialect.runs.claim(ctx, runId, owner, leaseMs, now));
}

/** `runs.renew`: extends the lease of the current fence holder; `LEASE_LOST` otherwise. */
export function renewRun(ctx: StoreContext) {
  return (runId: string, fence: number, leaseMs: number, now: number) =>
    guard('runs.renew', async () => {
      const result = await ctx.dialect.runs.renew(ctx, runId, fence, leaseMs, now);
      if (result.done && result.run) return result.run;
      throw leaseLost(runId, fence, result.run?.fence ?? -1);
    });
}

/** `runs.transition`: compare-and-set on fence + status; on a miss, the run as it stands says why. */
export function transitionRun(ctx: StoreContext) {
  return (runId: string, fence: number, t: RunTransition, now: number) =>
    guard('runs.transition', async () => {
      const { done, run: current } = await ctx.dialect.runs.transition(ctx, runId, fence, t, now);
      if (done && current) return current;
      if (current === undefined) throw runNotFound(runId);
      if (current.fence !== fence) throw leaseLost(runId, fence, current.fence);
      if (isTerminalRunStatus(current.status)) throw runConflict(runId, current.status);
      throw runConflict(runId, current.status, t.from);
    });
}

/** `runs.wake`: one unfenced `UPDATE`; a no-op on missing or terminal runs. */
export function wakeRun(ctx: StoreContext) {
  return (runId: string, now: number) =>
    guard('runs.wake', async () => {
      await sql`update ${ctx.t.runs} set ${wakeSet(now)} where id = ${encodeText(runId)} and status not in ${TERMINAL_SQL}`.execute(ctx.db);
    });
}

/**
 * `runs.promiseWake`: one unfenced `UPDATE`; a no-op on missing or terminal runs. A database before
 * cairn_0018_run_wake_promise (no promise column) gets the plain wake-up it got then.
 */
export function promiseWake(ctx: StoreContext) {
  return (runId: string, at: number, now: number) =>
    guard('runs.promiseWake', async () => {
      const id = encodeText(runId);
      try {
        await sql`update ${ctx.t.runs} set ${promiseSet(at, now)} where id = ${id} and status not in ${TERMINAL_SQL}`.execute(ctx.db);
      } catch (error) {
        if (!lacksColumn(error, PROMISED_COLUMN) && !lacksColumn(error, PROMISES_COLUMN)) throw error;
        await sql`update ${ctx.t.runs} set ${wakeSet(at, now)} where id = ${id} and status not in ${TERMINAL_SQL}`.execute(ctx.db);
      }
    });
}

/**
 * `runs.keepPromise`: one unfenced `UPDATE`; a no-op on missing or terminal runs. A database before
 * cairn_0018_run_wake_promise gets the plain wake-up it got then.
 */
export function keepPromise(ctx: StoreContext) {
  return (runId: string, now: number) =>
    guard('runs.keepPromise', async () => {
      const id = encodeText(runId);
      try {
        await sql`update ${ctx.t.runs} set ${keepSet(now)} where id = ${id} and status not in ${TERMINAL_SQL}`.execute(ctx.db);
      } catch (error) {
        if (!lacksColumn(error, PROMISED_COLUMN) && !lacksColumn(error, PROMISES_COLUMN)) throw error;
        await sql`update ${ctx.t.runs} set ${wakeSet(now)} where id = ${id} and status not in ${TERMINAL_SQL}`.execute(ctx.db);
      }
    });
}

/** `runs.requestCancel`: sets `cancel_requested` and wakes the run in one write. */
export function requestCancel(ctx: StoreContext) {
  return (runId: string, now: number, reason?: string) =>
    guard('runs.requestCancel', () => ctx.dialect.runs.requestCancel(ctx, runId, now, reason === undefined ? null : encodeText(reason)));
}

/**
 * `runs.findDue`: one range scan of the `due_at` index. `due_at` is maintained by every write:
 * `wake_at` for pending/waiting runs, the lease expiry for running ones, NULL for terminal ones
 * and for runs paused since they were last woken (`pauses.pauseRun` clears it; a paused run woken
 * meanwhile is passed over by the filter). PostgreSQL and MySQL skip rows another worker has
 * locked (being claimed) rather than wait.
 */
export function findDue(ctx: StoreContext) {
  return (now: number, limit: number) =>
    guard('runs.findDue', async (): Promise<DueRun[]> => {
      if (!Number.isInteger(limit) || limit < 1) return [];
      const due = (notPaused: RawBuilder<unknown>) =>
        rows(
          ctx.db,
          sql<Pick<RunRow, 'id' | 'workflow' | 'status'>>`select id, workflow, status from ${ctx.t.runs}
          where due_at <= ${now}${notPaused} order by due_at, id limit ${limit} ${ctx.dialect.skipLocked()}`,
        );
      // A database before cairn_0015_run_pause has no paused run: scan as it did then.
      const found = await due(sql` and paused_json is null`).catch((error: unknown) => {
        if (lacksColumn(error, PAUSED_COLUMN)) return due(sql``);
        throw error;
      });
      return found.map((row) => ({
        id: decodeText(toText(row.id)),
        workflow: decodeText(toText(row.workflow)),
        reason: row.status === 'running' ? 'lease-expired' : 'wake',
      }));
    });
}
