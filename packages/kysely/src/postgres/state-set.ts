import { sql } from 'kysely';
import { TERMINAL_SQL, checkWritable, first, type StoreContext } from '../context.js';
import type { StateWrite } from '../dialect/types.js';

/**
 * `state.set` on PostgreSQL: ONE statement locks the run row (`for no key update`, which does not
 * block inserts referencing it), upserts the (run, key) row when the fence and status allow, bumps
 * the run's `updated_at`, and returns the run's fence and status for the check.
 */
export async function postgresSetState(ctx: StoreContext, w: StateWrite): Promise<void> {
  const { t, dialect } = ctx;
  const { id, hash, key: storedKey, json, now, fence } = w;
  const row = await first(
    ctx.db,
    sql<{ r_fence: string; r_status: string }>`with r as (
              select fence, status from ${t.runs} where id = ${id} for no key update
            ), up as (
              insert into ${t.state} (run_id, key_hash, state_key, value_json, updated_at)
              select ${id}::text, ${hash}::text, ${storedKey}::text, ${json}::text, ${now}::bigint from r
              where ${fence === null ? sql`true` : sql`r.fence = ${fence}`} and r.status not in ${TERMINAL_SQL}
              ${dialect.upsertTail(['run_id', 'key_hash'], ['value_json', 'updated_at'])}
              returning 1 as one
            ), ru as (
              update ${t.runs} set updated_at = ${now} where id = ${id} and exists (select 1 from up)
            )
            select r.fence as r_fence, r.status as r_status from r`,
  );
  checkWritable(w.runId, fence, row === undefined ? undefined : { fence: row.r_fence, status: row.r_status });
}
