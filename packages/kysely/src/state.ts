import { sql } from 'kysely';
import type { Fence, Json } from '@cairn/core';
import { decodeJson, encodeJsonRequired, toText } from './codec/json.js';
import { decodeText, encodeText, keyHash } from './codec/text.js';
import { TERMINAL_SQL, checkWritable, first, guard, rows, type StoreContext } from './context.js';
import { callRoutine } from './routines/call-routine.js';
import { STATE_SET_PARAMS, orderedArgs, routineNames } from './routines/params.js';

/**
 * `state.set`: an upsert of one (run, key) row, never a read-modify-write of the whole state, so
 * writers of different keys never lose each other's values. The run row is locked exclusively
 * first (fence and terminal check, and `updated_at` bumped as the reference store does), which
 * serialises the state writes of one run. PostgreSQL: one statement; MySQL: one call of the
 * `state_set` procedure; SQLite: one transaction.
 */
export function setState(ctx: StoreContext) {
  const { t, dialect } = ctx;
  return (runId: string, fence: Fence, key: string, value: Json, now: number) =>
    guard('state.set', async () => {
      const id = encodeText(runId);
      const storedKey = encodeText(key);
      const hash = keyHash(storedKey);
      const json = encodeJsonRequired(value);
      if (dialect.name === 'postgres') {
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
        checkWritable(runId, fence, row === undefined ? undefined : { fence: row.r_fence, status: row.r_status });
        return;
      }
      if (dialect.name === 'mysql') {
        const row = await callRoutine<{ r_fence: unknown; r_status: unknown }>(
          ctx,
          routineNames(ctx.names.prefix).stateSet,
          STATE_SET_PARAMS,
          orderedArgs(STATE_SET_PARAMS, { p_run_id: id, p_fence: fence, p_key_hash: hash, p_state_key: storedKey, p_value: json, p_now: now }),
        );
        checkWritable(runId, fence, row === undefined || row.r_fence === null ? undefined : { fence: row.r_fence, status: row.r_status });
        return;
      }
      await dialect.transaction(ctx.db, async (trx) => {
        const run = await first(trx, sql<{ fence: unknown; status: unknown }>`select fence, status from ${t.runs} where id = ${id} ${dialect.lockForUpdate()}`);
        checkWritable(runId, fence, run);
        await sql`insert into ${t.state} (run_id, key_hash, state_key, value_json, updated_at)
          values (${id}, ${hash}, ${storedKey}, ${json}, ${now})
          ${dialect.upsertTail(['run_id', 'key_hash'], ['value_json', 'updated_at'])}`.execute(trx);
        await sql`update ${t.runs} set updated_at = ${now} where id = ${id}`.execute(trx);
      });
    });
}

/** `state.get`: one indexed read of the run's state rows; keys come back byte for byte. */
export function getState(ctx: StoreContext) {
  return (runId: string) =>
    guard('state.get', async (): Promise<Record<string, Json>> => {
      const found = await rows(
        ctx.db,
        sql<{ state_key: string; value_json: string }>`select state_key, value_json from ${ctx.t.state} where run_id = ${encodeText(runId)}`,
      );
      // fromEntries defines own properties, so keys such as `__proto__` stay plain keys.
      return Object.fromEntries(found.map((r) => [decodeText(toText(r.state_key)), decodeJson<Json>(r.value_json) ?? null]));
    });
}
