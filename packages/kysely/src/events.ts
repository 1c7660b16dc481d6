import { sql } from 'kysely';
import { isTerminalRunStatus, type EventRecord, type Json, type RunStatus } from '@cairn/core';
import { encodeJsonRequired } from './codec/json.js';
import { toEventRecord } from './codec/rows.js';
import { encodeText, keyHash } from './codec/text.js';
import { affected, first, guard, runNotFound, type StoreContext } from './context.js';
import { wakeSet } from './runs-lease.js';
import type { EventRow } from './schema/tables.js';

/**
 * `events.deliver`: one transaction that locks the run, inserts the event unless its name exists
 * (primary key (run_id, name_hash); first write wins) and wakes the run when it was stored.
 */
export function deliverEvent(ctx: StoreContext) {
  const { t, dialect } = ctx;
  return (runId: string, name: string, payload: Json, now: number) =>
    guard('events.deliver', () =>
      dialect.transaction(ctx.db, async (trx) => {
        const id = encodeText(runId);
        const run = await first(trx, sql<{ status: RunStatus }>`select status from ${t.runs} where id = ${id} ${dialect.lockForUpdate()}`);
        if (run === undefined) throw runNotFound(runId);
        if (isTerminalRunStatus(run.status)) return { delivered: false };
        const storedName = encodeText(name);
        const stored = await affected(
          trx,
          sql`${dialect.insertIgnoreHead()} into ${t.events} (run_id, name_hash, name, payload_json, delivered_at)
            values (${id}, ${keyHash(storedName)}, ${storedName}, ${encodeJsonRequired(payload)}, ${now})
            ${dialect.insertIgnoreTail()}`,
        );
        if (stored === 0) return { delivered: false };
        await sql`update ${t.runs} set ${wakeSet(now)} where id = ${id}`.execute(trx);
        return { delivered: true };
      }),
    );
}

/** `events.get`: a primary-key read. */
export function getEvent(ctx: StoreContext) {
  return (runId: string, name: string) =>
    guard('events.get', async (): Promise<EventRecord | undefined> => {
      const row = await first(
        ctx.db,
        sql<EventRow>`select * from ${ctx.t.events} where run_id = ${encodeText(runId)} and name_hash = ${keyHash(encodeText(name))}`,
      );
      return row === undefined ? undefined : toEventRecord(row);
    });
}
