import { decideTagWrite, mergeTags, type RunStore, type RunTags, type TagWrite } from '@cairn/core/backend';
import type { Filter, UpdateFilter } from 'mongodb';
import type { StoreContext } from './context.js';
import type { RunDoc } from './documents.js';
import { assertWritable, contention, guard } from './errors.js';
import { MAX_RETRIES } from './run-wake.js';
import { liveRun } from './step-store.js';

/**
 * The `tg` entries of `tags`: one string per tag, its key and value as a JSON array (no separator
 * a key could contain), which the multikey index `cairn_tags_created` (tg, createdAt, _id) holds.
 */
export function tagTokens(tags: RunTags): string[] {
  return Object.keys(tags).map((key) => JSON.stringify([key, tags[key]]));
}

/** The run document fields of `tags`: `tags` as JSON text (keys are free-form, so not a sub-document) and their `tg` tokens. */
export function tagFields(tags: RunTags): Pick<RunDoc, 'tags' | 'tg'> {
  return { tags: JSON.stringify(tags), tg: tagTokens(tags) };
}

/**
 * `runs.setTags`: reads the run's fence, status, tags and `tw` (tag writes), decides the write's
 * place (`decideTagWrite`), then one `updateOne` fenced and conditioned on that `tw` sets the
 * merged tags, their tokens and `tw + 1`. A write racing it (none should: the lease holder writes
 * tags one after the other) makes the update miss, and it reads again.
 */
export function setRunTags(ctx: StoreContext): NonNullable<RunStore['setTags']> {
  return (runId: string, fence: number, write: TagWrite) =>
    guard('runs.setTags', () =>
      ctx.exclusive(runId, async () => {
        for (let i = 0; i < MAX_RETRIES; i++) {
          const doc = assertWritable(await ctx.runs.findOne({ _id: runId }, { projection: { fence: 1, status: 1, tags: 1, tw: 1 } }), runId, fence);
          if (!decideTagWrite(runId, doc.tw, write)) return { applied: false };
          const merged = mergeTags(doc.tags === undefined ? undefined : (JSON.parse(doc.tags) as RunTags), write.tags);
          const filter = { ...liveRun(runId, fence), tw: doc.tw === undefined ? { $exists: false } : doc.tw } as Filter<RunDoc>;
          const update = { $set: { ...tagFields(merged), tw: write.seq + 1 } } as UpdateFilter<RunDoc>;
          if ((await ctx.runs.updateOne(filter, update)).matchedCount > 0) return { applied: true };
        }
        throw contention('runs.setTags', runId);
      }),
    );
}
