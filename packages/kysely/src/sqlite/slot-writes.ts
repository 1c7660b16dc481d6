import { sql } from 'kysely';
import type { SlotRequest } from '@cairn/core/backend';
import { decodeText } from '../codec/text.js';
import { first, type StoreContext } from '../context.js';
import { slotTarget, type SlotTarget } from '../slots/slot-target.js';
import type { SlotWrites } from '../slots/slot-writes.js';
import { transactionSlotWrites } from './transaction-slot-writes.js';

/**
 * SQLite's `acquire` and `release`: first ONE statement for the common case, exact because SQLite
 * runs one write at a time and a statement sees everything committed before it; when it matches
 * nothing, the full transaction (`transactionSlotWrites`) decides.
 * - acquire: takes the lowest free row when the key's rows exist, the holder neither holds a slot
 *   nor waits, and the free slots outnumber the waiters ahead (none counted without `wait`);
 * - release: frees the holder's row when the key has no waiter entry of the holder and no lapsed
 *   one to sweep, and returns the first in line from the same statement.
 */
export function sqliteSlotWrites(ctx: StoreContext): SlotWrites {
  const { t } = ctx;
  const full = transactionSlotWrites(ctx);
  const free = (now: number) => sql`(holder is null or expires_at <= ${now})`;

  const fastAcquire = (s: SlotTarget, request: SlotRequest, now: number) => {
    const { wait } = request;
    const ahead =
      wait === undefined
        ? sql`0`
        : sql`(select count(*) from ${t.slot_waiters} w where w.key_hash = ${s.keyHash} and w.expires_at > ${now}
            and (w.priority > ${wait.priority} or (w.priority = ${wait.priority} and (w.queued_at < ${wait.queuedAt} or (w.queued_at = ${wait.queuedAt} and w.holder < ${s.holder})))))`;
    return sql<{ idx: unknown }>`update ${t.slots} set holder = ${s.holder}, expires_at = ${request.expiresAt}
      where key_hash = ${s.keyHash}
        and idx = (select min(idx) from ${t.slots} where key_hash = ${s.keyHash} and idx < ${request.limit} and ${free(now)})
        and not exists (select 1 from ${t.slots} where key_hash = ${s.keyHash} and holder = ${s.holder})
        and not exists (select 1 from ${t.slot_waiters} where key_hash = ${s.keyHash} and holder_hash = ${s.holderHash})
        and ${request.limit} - (select count(*) from ${t.slots} where key_hash = ${s.keyHash} and holder is not null and expires_at > ${now}) > ${ahead}
      returning idx`;
  };

  const fastRelease = (s: SlotTarget, now: number) =>
    sql<{ next_holder: string | null }>`update ${t.slots} set holder = null, expires_at = 0
      where key_hash = ${s.keyHash} and holder = ${s.holder}
        and not exists (select 1 from ${t.slot_waiters} where key_hash = ${s.keyHash} and (holder_hash = ${s.holderHash} or expires_at <= ${now}))
      returning (select holder from ${t.slot_waiters} where key_hash = ${s.keyHash} and expires_at > ${now}
        order by priority desc, queued_at, holder limit 1) as next_holder`;

  return {
    async acquire(request, now) {
      const taken = await first(ctx.db, fastAcquire(slotTarget(request.key, request.holder), request, now));
      return taken === undefined ? full.acquire(request, now) : { acquired: true };
    },
    async release(key, holder, now) {
      const freed = await first(ctx.db, fastRelease(slotTarget(key, holder), now));
      if (freed === undefined) return full.release(key, holder, now);
      return freed.next_holder === null ? undefined : decodeText(freed.next_holder);
    },
  };
}
