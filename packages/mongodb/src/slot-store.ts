import type { SlotGrant, SlotRequest, SlotSnapshot, SlotStore } from '@cairn/core';
import type { Filter } from 'mongodb';
import type { StoreContext } from './context.js';
import { guard, isDuplicateKey } from './errors.js';
import { keyId, waiterId } from './slot-documents.js';
import type { SlotDoc, SlotWaiterDoc } from './slot-documents.js';
import { inKeyQueue, withSlotLock } from './slot-lock.js';

/** Line order: priority desc, queuedAt asc, holder asc (strings sort by UTF-8 bytes: by code point). */
const LINE = { priority: -1, queuedAt: 1, holder: 1 } as const;

/**
 * The `slots` part, without transactions (a standalone server and FerretDB have none worth
 * relying on):
 *
 * - **The limit is exact at every instant.** A key's slots are documents `<k>#0 .. <k>#limit-1`
 *   (created the first time each is taken), and a slot is taken by ONE conditional update of a
 *   free document (holder null or expired) or by inserting a missing one (a duplicate `_id` means
 *   a racer took it): atomic per document on MongoDB, so of N racers for the last slot one wins.
 * - **The line order is exact between requests that wait and releases.** An `acquire` with `wait`
 *   and a `release` run under the key's lock (`withSlotLock`): counting the free slots and the
 *   waiters ahead, taking a slot or recording the waiter, and reading the first waiter after a
 *   release happen as one step for the other lock holders, so no waiter is overtaken by one
 *   behind it and no release misses a waiter recorded just before. Requests without `wait` take
 *   no lock (they ignore the line by contract). Two things loosen it: a lock holder paused past
 *   `SLOT_LOCK_MS` (its lock is taken over: the order may then be approximate, the limit still
 *   holds), and a holder racing itself without `wait` from two processes (it may take two slots,
 *   both released together).
 * - **On FerretDB v1** a conditional update is not atomic across connections (decision 10): the
 *   store serialises its own operations per key within the process, and is single-process there.
 */
export function createSlotStore(ctx: StoreContext): SlotStore {
  const heldFilter = (k: string, key: string, limit: number, now: number): Filter<SlotDoc> => ({ k, key, idx: { $lt: limit }, holder: { $ne: null }, expiresAt: { $gt: now } });

  // The earliest expiry among the held slots: no slot frees itself sooner.
  const freeAt = async (k: string, key: string, limit: number, now: number): Promise<SlotGrant> => {
    const first = await ctx.slots.find(heldFilter(k, key, limit, now)).sort({ expiresAt: 1 }).limit(1).project<{ expiresAt: number }>({ expiresAt: 1 }).toArray();
    return first[0] === undefined ? { acquired: false } : { acquired: false, freeAt: first[0].expiresAt };
  };

  // Takes a free slot below `limit` for `holder`: the earliest expired one (a released one has
  // expiresAt 0), else a slot document not created yet. False when every slot is held.
  const take = async (request: SlotRequest, k: string, now: number): Promise<boolean> => {
    const { key, holder, limit, expiresAt } = request;
    for (let round = 0; round <= limit; round++) {
      const taken = await ctx.slots.findOneAndUpdate(
        { k, key, idx: { $lt: limit }, $or: [{ holder: null }, { expiresAt: { $lte: now } }] },
        { $set: { holder, expiresAt } },
        { sort: { expiresAt: 1 } },
      );
      if (taken) return true;
      const existing = await ctx.slots.find({ k, key, idx: { $lt: limit } }).project<{ idx: number }>({ idx: 1 }).toArray();
      const used = new Set(existing.map((d) => d.idx));
      let idx = 0;
      while (used.has(idx)) idx++;
      if (idx >= limit) return false;
      try {
        await ctx.slots.insertOne({ _id: `${k}#${idx}`, k, key, idx, holder, expiresAt });
        return true;
      } catch (err) {
        // A racer created that slot first: look again.
        if (!isDuplicateKey(err)) throw err;
      }
    }
    return false;
  };

  const acquire = async (request: SlotRequest, now: number): Promise<SlotGrant> => {
    const { key, holder, limit } = request;
    const k = keyId(key);
    const wid = waiterId(k, holder);
    const leaveLine = () => ctx.slotWaiters.deleteOne({ _id: wid });
    // Already a holder (expired or not, not taken over): extend, never shorten.
    const own = await ctx.slots.updateMany({ k, key, holder }, { $max: { expiresAt: request.expiresAt } });
    if (own.matchedCount > 0) {
      await leaveLine();
      return { acquired: true };
    }
    const wait = request.wait;
    if (wait === undefined) {
      if (!(await take(request, k, now))) return freeAt(k, key, limit, now);
      await leaveLine();
      return { acquired: true };
    }
    const { priority, queuedAt } = wait;
    const [held, ahead] = await Promise.all([
      ctx.slots.countDocuments(heldFilter(k, key, limit, now)),
      ctx.slotWaiters.countDocuments({
        k,
        key,
        _id: { $ne: wid },
        expiresAt: { $gt: now },
        $or: [{ priority: { $gt: priority } }, { priority, queuedAt: { $lt: queuedAt } }, { priority, queuedAt, holder: { $lt: holder } }],
      }),
    ]);
    const free = limit - held;
    if (free > ahead && (await take(request, k, now))) {
      await leaveLine();
      return { acquired: true };
    }
    const waiter: SlotWaiterDoc = { _id: wid, k, key, holder, priority, queuedAt, expiresAt: wait.expiresAt };
    await ctx.slotWaiters.replaceOne({ _id: wid }, waiter, { upsert: true });
    return free > ahead || free <= 0 ? freeAt(k, key, limit, now) : { acquired: false };
  };

  return {
    acquire: (request, now) => {
      const k = keyId(request.key);
      return guard('slots.acquire', () => (request.wait === undefined ? inKeyQueue(ctx, k, () => acquire(request, now)) : withSlotLock(ctx, k, now, () => acquire(request, now))));
    },
    renew: (key, holder, expiresAt, _now) => {
      const k = keyId(key);
      return guard('slots.renew', () =>
        inKeyQueue(ctx, k, async () => (await ctx.slots.updateMany({ k, key, holder }, { $max: { expiresAt } })).matchedCount > 0),
      );
    },
    release: (key, holder, now) =>
      guard('slots.release', () => {
        const k = keyId(key);
        return withSlotLock(ctx, k, now, async () => {
          await Promise.all([
            ctx.slots.updateMany({ k, key, holder }, { $set: { holder: null, expiresAt: 0 } }),
            ctx.slotWaiters.deleteOne({ _id: waiterId(k, holder) }),
          ]);
          const first = await ctx.slotWaiters.find({ k, key, expiresAt: { $gt: now } }).sort(LINE).limit(1).toArray();
          return first[0]?.holder;
        });
      }),
    inspect: (key, now) =>
      guard('slots.inspect', async () => {
        const k = keyId(key);
        const [held, waiters] = await Promise.all([
          ctx.slots.find({ k, key, holder: { $ne: null }, expiresAt: { $gt: now } }).sort({ expiresAt: 1, holder: 1 }).toArray(),
          ctx.slotWaiters.find({ k, key, expiresAt: { $gt: now } }).sort(LINE).toArray(),
        ]);
        const snapshot: SlotSnapshot = {
          holders: held.map((d) => ({ holder: d.holder!, expiresAt: d.expiresAt })),
          waiters: waiters.map((d) => ({ holder: d.holder, priority: d.priority, queuedAt: d.queuedAt, expiresAt: d.expiresAt })),
        };
        return snapshot;
      }),
  };
}
