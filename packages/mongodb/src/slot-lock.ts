import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CairnError } from '@cairn/core';
import type { StoreContext } from './context.js';
import { isDuplicateKey } from './errors.js';
import { KeyedLock } from './keyed-lock.js';

/**
 * How long a key's lock lasts on the callers' clock. A holder that died mid-operation holds up the
 * key's slow path (never its one-command fast path, nor the limit) until then.
 */
export const SLOT_LOCK_MS = 5_000;
// A busy lock is asked for again after 1, 2, 4 ... 50 ms (plus jitter), this many times (about
// 10 s in all), then the operation fails with STORE_ERROR and the engine retries it later.
const LOCK_ATTEMPTS = 200;

// One queue per key in this process: its own slot operations never race each other (for the lock
// document, or on FerretDB v1, whose conditional updates are not atomic, for a slot document).
const LOCAL = new KeyedLock();

/** Runs `fn` after this process's earlier operations on slot key `k` (a queue per key). */
export function inKeyQueue<T>(ctx: StoreContext, k: string, fn: () => Promise<T>): Promise<T> {
  return LOCAL.run(`${ctx.slotLocks.namespace}\u0000${k}`, fn);
}

/**
 * Runs `fn` holding the lock of slot key `k`: in this process (`inKeyQueue`) and across
 * processes (a lock document taken by one conditional upsert: `findOneAndUpdate` of a document
 * that is absent or expired, a duplicate `_id` meaning another owner has it). `now` is the
 * caller's clock, as for every store time. Released by deleting it, only by its owner.
 */
export function withSlotLock<T>(ctx: StoreContext, k: string, now: number, fn: () => Promise<T>): Promise<T> {
  return inKeyQueue(ctx, k, async () => {
    const owner = randomUUID();
    for (let attempt = 0; ; attempt++) {
      try {
        const doc = await ctx.slotLocks.findOneAndUpdate(
          { _id: k, expiresAt: { $lte: now } },
          { $set: { owner, expiresAt: now + SLOT_LOCK_MS } },
          { upsert: true, returnDocument: 'after' },
        );
        if (doc?.owner === owner) break;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      if (attempt + 1 >= LOCK_ATTEMPTS) {
        throw new CairnError('STORE_ERROR', `MongoDB slots: the lock of a slot key stayed busy (held by another process)`, { data: { key: k } });
      }
      await sleep(Math.min(50, 2 ** attempt) + Math.random() * 5);
    }
    try {
      return await fn();
    } finally {
      // A failed delete leaves the lock to expire; the operation's own outcome stands.
      await ctx.slotLocks.deleteOne({ _id: k, owner }).catch(() => undefined);
    }
  });
}
