import { sql } from 'kysely';
import type { Json } from '@cairn/core';
import type { Fence } from '@cairn/core/backend';
import { decodeJson, encodeJsonRequired, toText } from './codec/json.js';
import { decodeText, encodeText, keyHash } from './codec/text.js';
import { guard, rows, type StoreContext } from './context.js';

/**
 * `state.set`: an upsert of one (run, key) row, never a read-modify-write of the whole state, so
 * writers of different keys never lose each other's values. The run row is locked exclusively
 * first (fence and terminal check, and `updated_at` bumped as the reference store does), which
 * serialises the state writes of one run. PostgreSQL: one statement; MySQL: one call of the
 * `state_set` procedure; SQLite: one transaction (each in its dialect's folder).
 */
export function setState(ctx: StoreContext) {
  return (runId: string, fence: Fence, key: string, value: Json, now: number) =>
    guard('state.set', () => {
      const storedKey = encodeText(key);
      return ctx.dialect.setState(ctx, { runId, fence, id: encodeText(runId), key: storedKey, hash: keyHash(storedKey), json: encodeJsonRequired(value), now });
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
