import { CairnError } from '@cairn/core';
import type { SlotGrant, SlotRequest, SlotSnapshot, SlotStore } from '@cairn/core/backend';
import type { Filter, UpdateFilter } from 'mongodb';
import type { StoreContext } from './context.js';
import { guard, isDuplicateKey } from './errors.js';
import { decodeKey, encodeKey } from './key-codec.js';
import { keyId, waiterId } from './slot-documents.js';
import type { SlotKeyDoc, SlotWaiterDoc } from './slot-documents.js';
import { inKeyQueue, withSlotLock } from './slot-lock.js';

/** Line order: priority desc, queuedAt asc, holder asc (strings sort by UTF-8 bytes: by code point). */
const LINE = { priority: -1, queuedAt: 1, holder: 1 } as const;
// Compare-and-set rounds of the slow path before it gives up (only fast-path writes can move `v`
// under the lock, and each moves it once).
const MAX_ROUNDS = 32;

/** The answer of a fast path: done with this value, or go the slow way. */
type Fast<T> = { done: true; value: T } | { done: false };

/**
 * The `slots` part, without transactions (a standalone server and FerretDB have none worth
 * relying on). A key's holders live in ONE document (`<prefix>slots`, `SlotKeyDoc`), its waiters
 * in `<prefix>slot_waiters` (indexed in line order), and a per-key lock document orders the slow
 * path:
 *
 * - **Fast path, one command**: with no waiter (`wn: 0`), `acquire` of a new holder is one
 *   conditional upsert that adds it while fewer than `limit` entries exist; `release` is one
 *   conditional update that removes it; `renew` is always one (`$max`, never shortening). This is
 *   every call of an uncontended key.
 * - **Slow path, under the key's lock**: everything else (a waiter exists, every entry is taken or
 *   expired, the holder re-asks) reads the key document, counts the unexpired waiters ahead, and
 *   writes the decision with a compare-and-set on the document's version `v`, retried when a fast
 *   path moved it. Waiter documents change only under the lock, deleted before and inserted after
 *   the write that adjusts `wn`, so `wn` never counts fewer than exist and no fast path can pass a
 *   waiter.
 * - **Guarantees**: the limit is exact at every instant (every entry is added by a conditional
 *   update of the one document), and so is the line order (the slow path is serialised per key,
 *   and a release or refusal that races a fast path loses its compare-and-set and looks again, so
 *   no waiter is recorded just after a release that could not see it). Only a lock holder paused
 *   past `SLOT_LOCK_MS` can make the order approximate, never the limit.
 * - **On FerretDB v1** conditional updates are not atomic across connections (decision 10): the
 *   store queues its own operations per key within the process, and is single-process there.
 */
export function createSlotStore(ctx: StoreContext): SlotStore {
  const waitersOf = (k: string, key: string): Filter<SlotWaiterDoc> => ({ k, key });

  // A compare-and-set write of the key document at version `v` (absent: it does not exist yet).
  const casWrite = async (k: string, key: string, doc: SlotKeyDoc | null, update: { set: Record<string, unknown>; unset: string[] }): Promise<boolean> => {
    if (doc === null) {
      const fresh: SlotKeyDoc = { _id: k, key, v: 1, h: {}, n: 0, wn: 0 };
      for (const [path, value] of Object.entries(update.set)) {
        if (path.startsWith('h.')) fresh.h[path.slice(2)] = value as number;
        else (fresh as unknown as Record<string, unknown>)[path] = value;
      }
      try {
        await ctx.slots.insertOne(fresh);
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    }
    const change: UpdateFilter<SlotKeyDoc> = { $set: update.set, $inc: { v: 1 } };
    if (update.unset.length > 0) change.$unset = Object.fromEntries(update.unset.map((path) => [path, '']));
    const result = await ctx.slots.updateOne({ _id: k, key, v: doc.v }, change);
    return result.matchedCount === 1;
  };

  const fastAcquire = async (request: SlotRequest, k: string, field: string): Promise<Fast<SlotGrant>> => {
    try {
      const result = await ctx.slots.updateOne(
        { _id: k, key: request.key, wn: 0, n: { $lt: request.limit }, [field]: { $exists: false } },
        { $set: { [field]: request.expiresAt }, $inc: { n: 1, v: 1 } },
        { upsert: true },
      );
      if (result.matchedCount === 1 || result.upsertedCount === 1) return { done: true, value: { acquired: true } };
    } catch (err) {
      // The document exists and the filter did not match it: the upsert's insert collided.
      if (!isDuplicateKey(err)) throw err;
    }
    return { done: false };
  };

  const slowAcquire = async (request: SlotRequest, k: string, field: string, now: number): Promise<SlotGrant> => {
    const { key, holder, limit, wait } = request;
    const wid = waiterId(k, holder);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const doc = await ctx.slots.findOne({ _id: k, key });
      // Lapsed waiters go first (deleting before the write that lowers wn keeps wn >= the
      // documents). With wn 0 there are none, and only a slow path (this one: it holds the lock) raises it.
      if (round === 0 && (doc?.wn ?? 0) > 0) await ctx.slotWaiters.deleteMany({ ...waitersOf(k, key), expiresAt: { $lte: now } });
      const entries = Object.entries(doc?.h ?? {});
      const own = doc?.h[field.slice(2)];
      const live = entries.filter(([, expiresAt]) => expiresAt > now).map(([, expiresAt]) => expiresAt);
      const free = limit - live.length;
      const ahead =
        own !== undefined || wait === undefined
          ? 0
          : await ctx.slotWaiters.countDocuments({
              ...waitersOf(k, key),
              _id: { $ne: wid },
              expiresAt: { $gt: now },
              $or: [
                { priority: { $gt: wait.priority } },
                { priority: wait.priority, queuedAt: { $lt: wait.queuedAt } },
                { priority: wait.priority, queuedAt: wait.queuedAt, holder: { $lt: holder } },
              ],
            });
      if (own !== undefined || (free > 0 && free > ahead)) {
        // A grant leaves the line: the waiter document goes before the write that lowers wn.
        await ctx.slotWaiters.deleteOne({ _id: wid });
        const set: Record<string, unknown> = {
          [field]: Math.max(own ?? request.expiresAt, request.expiresAt),
          wn: await ctx.slotWaiters.countDocuments(waitersOf(k, key)),
        };
        const unset: string[] = [];
        if (own === undefined) {
          // Every entry taken: take over the expired ones that expired first (their holders' renew answers false).
          const expired = entries.filter(([, expiresAt]) => expiresAt <= now).sort((a, b) => a[1] - b[1]);
          while (entries.length - unset.length >= limit && unset.length < expired.length) unset.push(`h.${expired[unset.length]![0]}`);
          set.n = entries.length - unset.length + 1;
        }
        if (await casWrite(k, key, doc, { set, unset })) return { acquired: true };
        continue;
      }
      if (wait !== undefined) {
        // Refused in line: wn is raised (by a write that also proves the decision's snapshot
        // current: a fast release racing it moves v) before the waiter document exists. A waiter
        // asking again (the usual recheck) only refreshes its entry: wn >= 1 already counts it,
        // and while wn >= 1 no fast path runs and only the lock holder lowers it.
        const known = (await ctx.slotWaiters.countDocuments({ _id: wid })) === 1;
        if (!known || (doc?.wn ?? 0) < 1) {
          const wn = (await ctx.slotWaiters.countDocuments(waitersOf(k, key))) + (known ? 0 : 1);
          if (!(await casWrite(k, key, doc, { set: { wn }, unset: [] }))) continue;
        }
        const waiter: SlotWaiterDoc = { _id: wid, k, key, holder, priority: wait.priority, queuedAt: wait.queuedAt, expiresAt: wait.expiresAt };
        await ctx.slotWaiters.replaceOne({ _id: wid }, waiter, { upsert: true });
      }
      return free > 0 ? { acquired: false } : { acquired: false, freeAt: Math.min(...live) };
    }
    throw new CairnError('STORE_ERROR', 'MongoDB slots.acquire: the slot key kept changing under the write', { data: { key } });
  };

  const slowRelease = async (key: string, holder: string, k: string, field: string, now: number): Promise<string | undefined> => {
    await ctx.slotWaiters.deleteMany({ ...waitersOf(k, key), expiresAt: { $lte: now } });
    await ctx.slotWaiters.deleteOne({ _id: waiterId(k, holder) });
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const doc = await ctx.slots.findOne({ _id: k, key });
      if (doc === null) break;
      const held = doc.h[field.slice(2)] !== undefined;
      const set: Record<string, unknown> = { wn: await ctx.slotWaiters.countDocuments(waitersOf(k, key)) };
      if (held) set.n = Object.keys(doc.h).length - 1;
      if (await casWrite(k, key, doc, { set, unset: held ? [field] : [] })) break;
    }
    const first = await ctx.slotWaiters
      .find({ ...waitersOf(k, key), expiresAt: { $gt: now } })
      .sort(LINE)
      .limit(1)
      .toArray();
    return first[0]?.holder;
  };

  return {
    acquire: (request, now) =>
      guard('slots.acquire', async () => {
        const k = keyId(request.key);
        const field = `h.${encodeKey(request.holder)}`;
        const fast = await inKeyQueue(ctx, k, () => fastAcquire(request, k, field));
        return fast.done ? fast.value : withSlotLock(ctx, k, now, () => slowAcquire(request, k, field, now));
      }),
    renew: (key, holder, expiresAt, _now) =>
      guard('slots.renew', () => {
        const k = keyId(key);
        const field = `h.${encodeKey(holder)}`;
        // Reviving an expired entry makes a slot held again: the version moves so a slow path racing it looks again.
        return inKeyQueue(
          ctx,
          k,
          async () =>
            (await ctx.slots.updateOne({ _id: k, key, [field]: { $exists: true } }, { $max: { [field]: expiresAt }, $inc: { v: 1 } })).matchedCount === 1,
        );
      }),
    release: (key, holder, now) =>
      guard('slots.release', async () => {
        const k = keyId(key);
        const field = `h.${encodeKey(holder)}`;
        const fast = await inKeyQueue(ctx, k, async (): Promise<Fast<undefined>> => {
          const result = await ctx.slots.updateOne({ _id: k, key, wn: 0, [field]: { $exists: true } }, { $unset: { [field]: '' }, $inc: { n: -1, v: 1 } });
          return result.matchedCount === 1 ? { done: true, value: undefined } : { done: false };
        });
        return fast.done ? fast.value : withSlotLock(ctx, k, now, () => slowRelease(key, holder, k, field, now));
      }),
    inspect: (key, now) =>
      guard('slots.inspect', async () => {
        const k = keyId(key);
        const [doc, waiters] = await Promise.all([
          ctx.slots.findOne({ _id: k, key }),
          ctx.slotWaiters
            .find({ ...waitersOf(k, key), expiresAt: { $gt: now } })
            .sort(LINE)
            .toArray(),
        ]);
        const snapshot: SlotSnapshot = {
          holders: Object.entries(doc?.h ?? {})
            .filter(([, expiresAt]) => expiresAt > now)
            .map(([field, expiresAt]) => ({ holder: decodeKey(field), expiresAt })),
          waiters: waiters.map((d) => ({ holder: d.holder, priority: d.priority, queuedAt: d.queuedAt, expiresAt: d.expiresAt })),
        };
        return snapshot;
      }),
  };
}
