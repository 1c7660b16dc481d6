import type { SlotSnapshot, SlotStore } from '@cairn/core/backend';
import { toNumber } from '../codec/json.js';
import { decodeText, encodeText, keyHash } from '../codec/text.js';
import { affected, guard, rows, type StoreContext } from '../context.js';
import { slotStatements } from './slot-statements.js';
import { slotTarget } from './slot-target.js';

/**
 * The store's `slots` noun (docs/flow-control.md, decision 38): N rows per key in `slots`, created
 * lazily, and one row per waiting holder in `slot_waiters`. An acquire or a release locks the
 * key's row 0 and decides in one transaction (the servers: one routine call; SQLite: one statement
 * in the common case), so the "free slots outnumber the waiters ahead" rule and the line are exact
 * per key; a grant is a conditional update of one free row, so no two holders ever share a row
 * whatever else runs. A renew is one statement without the lock.
 */
export function slotsOf(ctx: StoreContext): SlotStore {
  const q = slotStatements(ctx);
  const writes = ctx.dialect.slotWrites(ctx);
  return {
    acquire: (request, now) => guard('slots.acquire', () => writes.acquire(request, now)),

    renew: (key, holder, expiresAt) => guard('slots.renew', async () => (await affected(ctx.db, q.renew(slotTarget(key, holder), expiresAt))) > 0),

    release: (key, holder, now) => guard('slots.release', () => writes.release(key, holder, now)),

    inspect: (key, now) =>
      guard('slots.inspect', async (): Promise<SlotSnapshot> => {
        const hash = keyHash(encodeText(key));
        const [holders, waiters] = [await rows(ctx.db, q.holders(hash, now)), await rows(ctx.db, q.line(hash, now))];
        return {
          holders: holders.map((row) => ({ holder: decodeText(row.holder), expiresAt: toNumber(row.expires_at) })),
          waiters: waiters.map((row) => ({
            holder: decodeText(row.holder),
            priority: toNumber(row.priority),
            queuedAt: toNumber(row.queued_at),
            expiresAt: toNumber(row.expires_at),
          })),
        };
      }),
  };
}
