import { CairnError } from '@cairn/core';
import { mergeTags, type RunStore, type RunTags, type TagWrite } from '@cairn/core/backend';
import { callRunScript, writeError, type StoreContext } from './context.js';

/** The (key, value) pairs of `tags`. */
const pairs = (tags: RunTags | undefined): Array<[string, string]> => Object.keys(tags ?? {}).map((key) => [key, (tags as RunTags)[key] as string]);

/** Adds run `runId` (created at `createdAt`) to the index set of each of `tags`: one ZADD per tag, each atomic. */
export async function indexTags(ctx: StoreContext, runId: string, createdAt: number, tags: RunTags | undefined): Promise<void> {
  await Promise.all(pairs(tags).map(([key, value]) => ctx.caller.command('runs.setTags', 'ZADD', [ctx.keys.tagIndex(key, value), createdAt, runId])));
}

/** Removes run `runId` from the index set of each of `tags`. */
export async function unindexTags(ctx: StoreContext, runId: string, tags: RunTags | undefined): Promise<void> {
  await Promise.all(pairs(tags).map(([key, value]) => ctx.caller.command('runs.tags', 'ZREM', [ctx.keys.tagIndex(key, value), runId])));
}

/**
 * `runs.setTags`. The run's hash holds its tags (`tags`, JSON) and `tagWrites`; each tag also has a
 * sorted set in the global slot (`KeySpace.tagIndex`). A run key and a global key are never in one
 * script (a cluster keeps them in different slots), so the index is kept a superset of the truth:
 * the run is added to the sets of the new values first, then the SET_TAGS script applies the write
 * to the hash (fenced, positional, and only if the tags are still what was read), then the run
 * leaves the sets of the values it replaced. A crash in between leaves an extra entry, which
 * `runs.list` checks against the run's hash and removes; never a missing one.
 */
export function setRunTags(ctx: StoreContext): NonNullable<RunStore['setTags']> {
  return async (runId: string, fence: number, write: TagWrite) => {
    for (let round = 0; round < 8; round++) {
      const [createdAt, tagsText, tagWrites] = (await ctx.caller.command('runs.setTags', 'HMGET', [
        ctx.keys.run(runId),
        'createdAt',
        'tags',
        'tagWrites',
      ])) as Array<string | null>;
      const current = typeof tagsText === 'string' ? (JSON.parse(tagsText) as RunTags) : undefined;
      const merged = mergeTags(current, write.tags);
      const next = write.seq === Number(tagWrites ?? 0) && typeof createdAt === 'string';
      if (next) await indexTags(ctx, runId, Number(createdAt), write.tags);
      const reply = await callRunScript(ctx, ctx.scripts.setTags, runId, [String(fence), String(write.seq), tagsText ?? '', JSON.stringify(merged)]);
      switch (reply.code) {
        case 'OK': {
          const replaced = pairs(current).filter(([key, value]) => Object.hasOwn(write.tags, key) && write.tags[key] !== value);
          await unindexTags(ctx, runId, Object.fromEntries(replaced));
          return { applied: true };
        }
        case 'TAKEN':
          return { applied: false };
        case 'GAP':
          throw new CairnError('RUN_CONFLICT', `Run ${runId}: tag write ${write.seq} comes before write ${String(reply.payload[0])}`, {
            data: { runId, seq: write.seq, tagWrites: Number(reply.payload[0]) },
          });
        case 'CHANGED':
          continue;
        default:
          throw writeError(runId, reply.code, reply.payload, fence);
      }
    }
    throw new CairnError('STORE_ERROR', `Redis store: the tags of run ${runId} kept changing under runs.setTags`, { data: { runId } });
  };
}
