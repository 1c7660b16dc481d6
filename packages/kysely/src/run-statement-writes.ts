import { sql, type RawBuilder } from 'kysely';
import type { RunRecord } from '@cairn/core';
import type { RunTransition } from '@cairn/core/backend';
import { encodeJson } from './codec/json.js';
import { toRunRecord } from './codec/rows.js';
import { encodeText } from './codec/text.js';
import { TERMINAL_SQL, affected, inList, rows, type StoreContext } from './context.js';
import type { RunWrites } from './dialect/types.js';
import { wakeSet } from './run-wake-set.js';
import { PAUSED_COLUMN, PROMISED_COLUMN, PROMISES_COLUMN } from './schema/added-columns.js';
import { lacksColumn } from './schema/lacks-column.js';
import { readRun } from './runs.js';
import type { RunRow } from './schema/tables.js';

/**
 * Runs a single-row compare-and-set `UPDATE` of a run and returns the row it wrote, or undefined
 * when it matched nothing. One statement with `RETURNING` on PostgreSQL and SQLite; on MySQL the
 * update and the read-back share one transaction, so the row read is exactly the one written.
 */
export async function updateRun(ctx: StoreContext, runId: string, update: RawBuilder<unknown>): Promise<RunRecord | undefined> {
  if (ctx.dialect.returning) {
    const [row] = await rows(ctx.db, sql<RunRow>`${update} returning *`);
    return row === undefined ? undefined : toRunRecord(row);
  }
  return ctx.dialect.transaction(ctx.db, async (trx) => ((await affected(trx, update)) === 0 ? undefined : readRun(ctx, trx, runId)));
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

/**
 * What a claim leaves of `wake_at` (decision 78): a wake-up asked for later than the claim stays,
 * lowered to an outstanding promise later than the claim (`runs.promiseWake`), so the next
 * suspension is no later than either; a due one is news the claimer replays, and a pending run's is its start grace:
 * both go. Reads the row as it was before the update (the SET of PostgreSQL and SQLite sees the old
 * values). `promised`: false on a database before cairn_0018_run_wake_promise (no promise column).
 */
const claimedWake = (now: number, promised: boolean) => {
  const kept = sql`case when status <> 'pending' and wake_at > ${now} then wake_at else null end`;
  if (!promised) return sql`wake_at = ${kept}`;
  // A promise whose time came is forgotten with its count (MySQL assigns left to right: promises
  // is assigned before promised_at, which it reads).
  return sql`wake_at = case when promised_at > ${now} and (status = 'pending' or wake_at is null or wake_at <= ${now} or wake_at > promised_at)
      then promised_at else ${kept} end,
    promises = case when promised_at > ${now} then promises else null end,
    promised_at = case when promised_at > ${now} then promised_at else null end`;
};

/**
 * The run writes as compare-and-set `UPDATE` statements (PostgreSQL, SQLite): one statement each;
 * on a miss, one read of the run says why.
 */
export const statementRunWrites: RunWrites = {
  claim: async (ctx, runId, owner, leaseMs, now) => {
    const expiresAt = now + leaseMs;
    const ownerText = encodeText(owner);
    const claim = (notPaused: RawBuilder<unknown>, promised: boolean) =>
      updateRun(
        ctx,
        runId,
        sql`update ${ctx.t.runs} set due_at = ${expiresAt}, status = 'running', fence = fence + 1,
            lease_owner = ${ownerText}, lease_expires_at = ${expiresAt}, ${claimedWake(now, promised)}, updated_at = ${now}
          where id = ${encodeText(runId)} and status not in ${TERMINAL_SQL}${notPaused}
            and (lease_owner is null or lease_expires_at <= ${now} or lease_owner = ${ownerText})`,
      );
    // A database a release or more behind claims as it did then: without the promise column
    // (before cairn_0018_run_wake_promise), then also without a paused run (before cairn_0015_run_pause).
    const attempt = async (level: number): Promise<RunRecord | undefined> => {
      try {
        return await claim(level < 2 ? sql` and paused_json is null` : sql``, level === 0);
      } catch (error) {
        if (level < 2 && (lacksColumn(error, PROMISED_COLUMN) || lacksColumn(error, PROMISES_COLUMN) || lacksColumn(error, PAUSED_COLUMN)))
          return attempt(level + 1);
        throw error;
      }
    };
    return attempt(0);
  },

  renew: async (ctx, runId, fence, leaseMs, now) => {
    const expiresAt = now + leaseMs;
    const run = await updateRun(
      ctx,
      runId,
      sql`update ${ctx.t.runs} set due_at = ${expiresAt}, lease_expires_at = ${expiresAt}, updated_at = ${now}
          where id = ${encodeText(runId)} and fence = ${fence} and status not in ${TERMINAL_SQL} and lease_owner is not null`,
    );
    return run === undefined ? { done: false, run: await readRun(ctx, ctx.db, runId) } : { done: true, run };
  },

  transition: async (ctx, runId, fence, t, now) => {
    const run = await updateRun(
      ctx,
      runId,
      sql`update ${ctx.t.runs} set ${transitionSet(t, now)}
            where id = ${encodeText(runId)} and fence = ${fence} and status in ${inList(t.from)} and status not in ${TERMINAL_SQL}`,
    );
    return run === undefined ? { done: false, run: await readRun(ctx, ctx.db, runId) } : { done: true, run };
  },

  requestCancel: async (ctx, runId, now, reason) => {
    // The first request's reason is kept: SET reads the old cancel_requested (PostgreSQL, SQLite).
    const run = await updateRun(
      ctx,
      runId,
      sql`update ${ctx.t.runs} set ${wakeSet(now)}, cancel_reason = case when cancel_requested = 0 then ${reason} else cancel_reason end, cancel_requested = 1
          where id = ${encodeText(runId)} and status not in ${TERMINAL_SQL}`,
    );
    return run ?? readRun(ctx, ctx.db, runId);
  },
};
