import type { SlotGrant } from '@cairn/core/backend';
import { toNumber, toOptionalNumber } from '../codec/json.js';
import { decodeText } from '../codec/text.js';
import type { StoreContext } from '../context.js';
import { callRoutine } from '../routines/call-routine.js';
import { SLOT_ACQUIRE_PARAMS, SLOT_RELEASE_PARAMS, slotRoutineNames } from '../routines/slot-routine-params.js';
import { slotTarget } from './slot-target.js';
import type { SlotWrites } from './slot-writes.js';

// The migration that creates the routines, named by the "run the migrations" error.
const CREATED_BY = 'cairn_0011_slots';

/**
 * PostgreSQL and MySQL/MariaDB: `acquire` and `release` are one call each of the slot routines of
 * `cairn_0011_slots` (one round trip), which lock the key, decide and write in one transaction.
 */
export function routineSlotWrites(ctx: StoreContext): SlotWrites {
  const names = slotRoutineNames(ctx.names.prefix);
  return {
    async acquire(request, now): Promise<SlotGrant> {
      const s = slotTarget(request.key, request.holder);
      const { wait } = request;
      const row = await callRoutine<{ acquired: unknown; free_at: unknown }>(
        ctx,
        names.acquire,
        SLOT_ACQUIRE_PARAMS,
        [
          s.keyHash,
          s.holder,
          s.holderHash,
          request.limit,
          request.expiresAt,
          now,
          wait === undefined ? 0 : 1,
          wait?.priority ?? 0,
          wait?.queuedAt ?? 0,
          wait?.expiresAt ?? 0,
        ],
        CREATED_BY,
      );
      if (row !== undefined && (row.acquired === true || toNumber(row.acquired) === 1)) return { acquired: true };
      const freeAt = toOptionalNumber(row?.free_at ?? null);
      return freeAt === undefined ? { acquired: false } : { acquired: false, freeAt };
    },
    async release(key, holder, now) {
      const s = slotTarget(key, holder);
      const row = await callRoutine<{ next_holder: string | null }>(
        ctx,
        names.release,
        SLOT_RELEASE_PARAMS,
        [s.keyHash, s.holder, s.holderHash, now],
        CREATED_BY,
      );
      return row?.next_holder == null ? undefined : decodeText(String(row.next_holder));
    },
  };
}
