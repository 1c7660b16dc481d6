import { sql } from 'kysely';
import { checkWritable, first, type StoreContext } from '../context.js';
import type { StateWrite } from '../dialect/types.js';

/** `state.set` on SQLite: one `BEGIN IMMEDIATE` transaction (read and check the run, upsert, bump). */
export async function sqliteSetState(ctx: StoreContext, w: StateWrite): Promise<void> {
  const { t, dialect } = ctx;
  const { id, hash, key: storedKey, json, now, fence } = w;
  await dialect.transaction(ctx.db, async (trx) => {
    const run = await first(trx, sql<{ fence: unknown; status: unknown }>`select fence, status from ${t.runs} where id = ${id} ${dialect.lockForUpdate()}`);
    checkWritable(w.runId, fence, run);
    await sql`insert into ${t.state} (run_id, key_hash, state_key, value_json, updated_at)
          values (${id}, ${hash}, ${storedKey}, ${json}, ${now})
          ${dialect.upsertTail(['run_id', 'key_hash'], ['value_json', 'updated_at'])}`.execute(trx);
    await sql`update ${t.runs} set updated_at = ${now} where id = ${id}`.execute(trx);
  });
}
