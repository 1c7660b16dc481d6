import { sql } from 'kysely';
import { isTerminalRunStatus, type Json, type RunStatus } from '@cairn/core';
import type { DeliverOptions, EventDelivery, EventRecord } from '@cairn/core/backend';
import { encodeJsonRequired } from './codec/json.js';
import { toEventRecord } from './codec/rows.js';
import { encodeText, keyHash } from './codec/text.js';
import { first, guard, runNotFound, type StoreContext } from './context.js';
import { wakeSet } from './run-wake-set.js';
import type { EventRow } from './schema/tables.js';

/**
 * `events.deliver`: one transaction that locks the run row (SQLite: the write transaction is
 * exclusive already), so the sends of one run take turns; then it answers a known idempotency key
 * as a duplicate, refuses a terminal run, numbers the message one past the last of its name,
 * inserts it and wakes the run. The primary key (run_id, name_hash, seq) and the unique index on
 * (run_id, idempotency_hash) back the lock: a write that slipped past it fails instead of storing
 * a second message under one number or key.
 */
export function deliverEvent(ctx: StoreContext) {
  const { t, dialect } = ctx;
  return (runId: string, name: string, payload: Json, now: number, options?: DeliverOptions) =>
    guard('events.deliver', () =>
      dialect.transaction(ctx.db, async (trx): Promise<EventDelivery> => {
        const id = encodeText(runId);
        const run = await first(trx, sql<{ status: RunStatus }>`select status from ${t.runs} where id = ${id} ${dialect.lockForUpdate()}`);
        if (run === undefined) throw runNotFound(runId);
        const key = options?.idempotencyKey === undefined ? undefined : encodeText(options.idempotencyKey);
        const keyHashed = key === undefined ? null : keyHash(key);
        if (keyHashed !== null) {
          const earlier = await first(trx, sql<{ seq: number | string }>`select seq from ${t.events} where run_id = ${id} and idempotency_hash = ${keyHashed}`);
          if (earlier !== undefined) return { delivered: false, duplicate: true, seq: Number(earlier.seq) };
        }
        if (isTerminalRunStatus(run.status)) return { delivered: false, duplicate: false };
        const storedName = encodeText(name);
        const nameHash = keyHash(storedName);
        const last = await first(
          trx,
          sql<{ seq: number | string | null }>`select max(seq) as seq from ${t.events} where run_id = ${id} and name_hash = ${nameHash}`,
        );
        const seq = Number(last?.seq ?? 0) + 1;
        await sql`insert into ${t.events} (run_id, name_hash, seq, name, payload_json, delivered_at, idempotency_hash, idempotency_key)
          values (${id}, ${nameHash}, ${seq}, ${storedName}, ${encodeJsonRequired(payload)}, ${now}, ${keyHashed}, ${key ?? null})`.execute(trx);
        await sql`update ${t.runs} set ${wakeSet(now)} where id = ${id}`.execute(trx);
        return { delivered: true, duplicate: false, seq };
      }),
    );
}

/** `events.get`: a primary-key read of message `seq`. */
export function getEvent(ctx: StoreContext) {
  return (runId: string, name: string, seq: number) =>
    guard('events.get', async (): Promise<EventRecord | undefined> => {
      const row = await first(
        ctx.db,
        sql<EventRow>`select * from ${ctx.t.events} where run_id = ${encodeText(runId)} and name_hash = ${keyHash(encodeText(name))} and seq = ${seq}`,
      );
      return row === undefined ? undefined : toEventRecord(row);
    });
}
