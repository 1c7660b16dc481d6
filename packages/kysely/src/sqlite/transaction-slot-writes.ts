import { CairnError } from '@cairn/core';
import type { SlotGrant, SlotRequest } from '@cairn/core/backend';
import { toNumber, toOptionalNumber } from '../codec/json.js';
import { decodeText } from '../codec/text.js';
import { affected, first, type StoreContext } from '../context.js';
import type { AnyKysely } from '../dialect/types.js';
import { slotStatements } from '../slots/slot-statements.js';
import { slotTarget, type SlotTarget } from '../slots/slot-target.js';
import type { SlotWrites } from '../slots/slot-writes.js';

// A grant loses its row only to a renew of that row's expired holder, between the read and the
// take; the next try reads again. More losses in a row than this mean something else is wrong.
const TAKE_TRIES = 8;

/**
 * `acquire` and `release` as one transaction of the store's own statements, the same logic as the
 * servers' slot routines: lock the key's row 0 (SQLite: `BEGIN IMMEDIATE` already serialises
 * writers), read the key's rows and the line, then grant by a conditional update of one free row,
 * or record the waiter. SQLite's path when its one-statement fast path does not apply.
 */
export function transactionSlotWrites(ctx: StoreContext): SlotWrites {
  const { dialect } = ctx;
  const q = slotStatements(ctx);

  /** One try inside the transaction; `undefined` when the free row was taken meanwhile. */
  async function tryAcquire(trx: AnyKysely, s: SlotTarget, request: SlotRequest, now: number): Promise<SlotGrant | undefined> {
    if ((await first(trx, q.lock(s))) === undefined) {
      // The key's first acquire creates its rows; a concurrent first acquire's rows are ignored.
      for (const insert of q.createRows(s, 0, request.limit)) await insert.execute(trx);
      await first(trx, q.lock(s));
    }
    let state = (await first(trx, q.state(s, request.limit, now, request.wait)))!;
    const slotRows = toNumber(state.slot_rows);
    if (state.mine === null && state.free_idx === null && slotRows < request.limit) {
      // The limit grew since the rows were made.
      for (const insert of q.createRows(s, slotRows, request.limit)) await insert.execute(trx);
      state = (await first(trx, q.state(s, request.limit, now, request.wait)))!;
    }
    const leaveLine = async () => {
      if (toNumber(state.waiting) > 0) await q.dequeue(s, now).execute(trx);
    };
    if (state.mine !== null) {
      await q.extend(s, toNumber(state.mine), request.expiresAt).execute(trx);
      await leaveLine();
      return { acquired: true };
    }
    const free = request.limit - toNumber(state.held ?? 0);
    const granted = request.wait === undefined ? free > 0 : free > toNumber(state.ahead);
    if (granted && state.free_idx !== null) {
      if ((await affected(trx, q.take(s, toNumber(state.free_idx), request.expiresAt, now))) === 0) return undefined;
      await leaveLine();
      return { acquired: true };
    }
    if (request.wait !== undefined) await q.enqueue(s, request.wait).execute(trx);
    const freeAt = free <= 0 ? toOptionalNumber(state.free_at) : undefined;
    return freeAt === undefined ? { acquired: false } : { acquired: false, freeAt };
  }

  return {
    async acquire(request, now) {
      const s = slotTarget(request.key, request.holder);
      for (let attempt = 0; attempt < TAKE_TRIES; attempt += 1) {
        const grant = await dialect.transaction(ctx.db, (trx) => tryAcquire(trx, s, request, now));
        if (grant !== undefined) return grant;
      }
      throw new CairnError('STORE_ERROR', `slots.acquire: the free slot of ${request.key} was taken ${TAKE_TRIES} times in a row`);
    },

    release: (key, holder, now) =>
      dialect.transaction(ctx.db, async (trx) => {
        const s = slotTarget(key, holder);
        await first(trx, q.lock(s));
        await q.free(s).execute(trx);
        await q.dequeue(s, now).execute(trx);
        const next = await first(trx, q.line(s.keyHash, now, 1));
        return next === undefined ? undefined : decodeText(next.holder);
      }),
  };
}
