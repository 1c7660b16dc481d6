import { sql, type RawBuilder } from 'kysely';
import type { SlotWait } from '@cairn/core/backend';
import type { StoreContext } from '../context.js';
import type { SlotTarget } from './slot-target.js';

/** What `slotState` reads of one key, as drivers return it (counts may be strings). */
export interface SlotStateRow {
  /** How many slot rows the key has (rows are created lazily, 0..n-1). */
  slot_rows: unknown;
  /** Slots held with `expires_at > now`. */
  held: unknown;
  /** The earliest `expires_at` among those. */
  free_at: unknown;
  /** The lowest free `idx` below the limit, NULL when none. */
  free_idx: unknown;
  /** The `idx` the holder holds, NULL when none. */
  mine: unknown;
  /** 1 when the holder has a waiter entry. */
  waiting: unknown;
  /** Unexpired waiters ahead of the holder in line (0 without `wait`). */
  ahead: unknown;
}

/** Rows are inserted this many at a time (10,000 slots stay under every driver's parameter limit). */
const BATCH = 500;

/** The statements of `slots`, in the SQL the three dialects share (the dialect object supplies the rest). */
export function slotStatements(ctx: StoreContext) {
  const { t, dialect } = ctx;
  const free = (now: number) => sql`(holder is null or expires_at <= ${now})`;
  return {
    /**
     * Locks the key's row 0: every acquire and release of the key takes this lock first, so each
     * sees the slots and the line as the one before it left them (SQLite: `BEGIN IMMEDIATE`).
     */
    lock: (s: SlotTarget) => sql<{ idx: unknown }>`select idx from ${t.slots} where key_hash = ${s.keyHash} and idx = 0 ${dialect.lockForUpdate()}`,

    /** Inserts the missing slot rows `from`..`to - 1` (free), ignoring rows a concurrent call made. */
    createRows: (s: SlotTarget, from: number, to: number): RawBuilder<unknown>[] => {
      const batches: RawBuilder<unknown>[] = [];
      for (let start = from; start < to; start += BATCH) {
        const values = [];
        for (let idx = start; idx < Math.min(to, start + BATCH); idx += 1) values.push(sql`(${s.keyHash}, ${sql.lit(idx)}, null, 0)`);
        batches.push(
          sql`${dialect.insertIgnoreHead()} into ${t.slots} (key_hash, idx, holder, expires_at) values ${sql.join(values)} ${dialect.insertIgnoreTail()}`,
        );
      }
      return batches;
    },

    /** Everything `acquire` decides on, in one read of the key's slot rows and two indexed waiter reads. */
    state: (s: SlotTarget, limit: number, now: number, wait: SlotWait | undefined) => {
      const ahead =
        wait === undefined
          ? sql`0`
          : sql`(select count(*) from ${t.slot_waiters} w where w.key_hash = ${s.keyHash} and w.holder_hash <> ${s.holderHash} and w.expires_at > ${now}
              and (w.priority > ${wait.priority} or (w.priority = ${wait.priority} and (w.queued_at < ${wait.queuedAt} or (w.queued_at = ${wait.queuedAt} and w.holder < ${s.holder})))))`;
      return sql<SlotStateRow>`select count(*) as slot_rows,
          sum(case when holder is not null and expires_at > ${now} then 1 else 0 end) as held,
          min(case when holder is not null and expires_at > ${now} then expires_at end) as free_at,
          min(case when idx < ${limit} and ${free(now)} then idx end) as free_idx,
          max(case when holder = ${s.holder} then idx end) as mine,
          (select count(*) from ${t.slot_waiters} w where w.key_hash = ${s.keyHash} and w.holder_hash = ${s.holderHash}) as waiting,
          ${ahead} as ahead
        from ${t.slots} where key_hash = ${s.keyHash}`;
    },

    /** Keeps the holder's slot `idx`, extended to `expiresAt` (never shortened). */
    extend: (s: SlotTarget, idx: number, expiresAt: number) =>
      sql`update ${t.slots} set expires_at = case when expires_at < ${expiresAt} then ${expiresAt} else expires_at end where key_hash = ${s.keyHash} and idx = ${idx}`,

    /** Takes slot `idx` if it is still free: a renew of its expired holder may have come first. */
    take: (s: SlotTarget, idx: number, expiresAt: number, now: number) =>
      sql`update ${t.slots} set holder = ${s.holder}, expires_at = ${expiresAt} where key_hash = ${s.keyHash} and idx = ${idx} and ${free(now)}`,

    /** Records the holder as a waiter, or refreshes its entry. */
    enqueue: (s: SlotTarget, wait: SlotWait) =>
      sql`insert into ${t.slot_waiters} (key_hash, holder_hash, holder, priority, queued_at, expires_at)
        values (${s.keyHash}, ${s.holderHash}, ${s.holder}, ${wait.priority}, ${wait.queuedAt}, ${wait.expiresAt})
        ${dialect.upsertTail(['key_hash', 'holder_hash'], ['priority', 'queued_at', 'expires_at'])}`,

    /** Removes the holder's waiter entry, and the key's lapsed entries with it (they would only pile up). */
    dequeue: (s: SlotTarget, now: number) =>
      sql`delete from ${t.slot_waiters} where key_hash = ${s.keyHash} and (holder_hash = ${s.holderHash} or expires_at <= ${now})`,

    /** Extends the holder's slot wherever it is (never shortened); matches nothing once it was taken over or released. */
    renew: (s: SlotTarget, expiresAt: number) =>
      sql`update ${t.slots} set expires_at = case when expires_at < ${expiresAt} then ${expiresAt} else expires_at end where key_hash = ${s.keyHash} and holder = ${s.holder}`,

    /** Frees the holder's slot. */
    free: (s: SlotTarget) => sql`update ${t.slots} set holder = null, expires_at = 0 where key_hash = ${s.keyHash} and holder = ${s.holder}`,

    /** The unexpired waiters of a key in line order (`limit` of them when given). */
    line: (keyHash: string, now: number, limit?: number) =>
      sql<{ holder: string; priority: unknown; queued_at: unknown; expires_at: unknown }>`select holder, priority, queued_at, expires_at from ${t.slot_waiters}
        where key_hash = ${keyHash} and expires_at > ${now} order by priority desc, queued_at, holder ${limit === undefined ? sql`` : sql`limit ${limit}`}`,

    /** The holders of a key's unexpired slots, by slot. */
    holders: (keyHash: string, now: number) =>
      sql<{
        holder: string;
        expires_at: unknown;
      }>`select holder, expires_at from ${t.slots} where key_hash = ${keyHash} and holder is not null and expires_at > ${now} order by idx`,
  };
}
