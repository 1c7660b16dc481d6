import type { Filter, UpdateFilter } from 'mongodb';
import type { StoreContext } from './context.js';
import type { RunDoc } from './documents.js';

/** How many times a write retries when the run's status moved between two of its attempts. */
export const MAX_RETRIES = 50;

/** Extra conditions and fields written in the same atomic update as a wake. */
export interface WakeExtra {
  filter?: Filter<RunDoc>;
  set?: Record<string, unknown>;
  /** Fields removed in the same update. */
  unset?: Record<string, ''>;
  /** Fields lowered (`$min`) in the same update. */
  min?: Record<string, number>;
  /** Fields incremented (`$inc`) in the same update. */
  inc?: Record<string, number>;
}

/**
 * Wakes a non-terminal run (`wakeAt = min(wakeAt, now)`) together with `extra`, in ONE atomic
 * update. `dueAt` mirrors `wakeAt` only while the run is `pending`/`waiting` (while `running` it
 * is the lease expiry), and a classic update cannot branch on the status it finds, so this tries
 * the update for `pending`/`waiting` first and then the one for `running`; each is atomic on its
 * own, and a status that moved between the two makes both miss, which the caller sees as `hit:
 * false` and answers by reading the run and retrying. Returns the document after the write when
 * `returning` (a `findOneAndUpdate`), else only whether it matched (an `updateOne`).
 */
export async function tryWake(ctx: StoreContext, runId: string, now: number, extra: WakeExtra, returning: boolean): Promise<{ hit: boolean; doc?: RunDoc }> {
  const variants: Array<{ statuses: RunDoc['status'][]; min: Record<string, number> }> = [
    { statuses: ['pending', 'waiting'], min: { wakeAt: now, dueAt: now } },
    { statuses: ['running'], min: { wakeAt: now } },
  ];
  for (const variant of variants) {
    const filter = { _id: runId, status: { $in: variant.statuses }, ...extra.filter } as Filter<RunDoc>;
    const update = {
      $min: { ...variant.min, ...extra.min },
      $set: { updatedAt: now, ...extra.set },
      ...(extra.unset === undefined ? {} : { $unset: extra.unset }),
      ...(extra.inc === undefined ? {} : { $inc: extra.inc }),
    } as UpdateFilter<RunDoc>;
    if (returning) {
      const doc = await ctx.runs.findOneAndUpdate(filter, update, await ctx.modifyOptions());
      if (doc) return { hit: true, doc };
    } else {
      const result = await ctx.runs.updateOne(filter, update);
      if (result.matchedCount > 0) return { hit: true };
    }
  }
  return { hit: false };
}
