import type { Json } from '@cairn/core';
import type { StateStore } from '@cairn/core/backend';
import type { Filter, UpdateFilter } from 'mongodb';
import type { StoreContext } from './context.js';
import type { RunDoc } from './documents.js';
import { assertWritable, contention, guard } from './errors.js';
import { decodeJson, encodeJson } from './json-codec.js';
import { decodeKey, encodeKey } from './key-codec.js';
import { MAX_RETRIES } from './run-wake.js';
import { liveRun } from './step-store.js';

/**
 * The `state` part of the store. Each key is its own field `state.<encoded key>` of the run
 * document and `set` is one `$set` of that field alone, fenced in the same filter: concurrent
 * writers of different keys never touch each other's fields, and nothing is read first.
 */
export function createStateStore(ctx: StoreContext): StateStore {
  return {
    set: (runId, fence, key, value, now) =>
      guard('state.set', () =>
        ctx.exclusive(runId, async () => {
          const update = { $set: { [`state.${encodeKey(key)}`]: encodeJson(value), updatedAt: now } } as UpdateFilter<RunDoc>;
          for (let i = 0; i < MAX_RETRIES; i++) {
            const result = await ctx.runs.updateOne(liveRun(runId, fence) as Filter<RunDoc>, update);
            if (result.matchedCount > 0) return;
            assertWritable(await ctx.runs.findOne({ _id: runId }, { projection: { fence: 1, status: 1 } }), runId, fence);
          }
          throw contention('state.set', runId);
        }),
      ),
    get: (runId) =>
      guard('state.get', async () => {
        const doc = await ctx.runs.findOne({ _id: runId }, { projection: { state: 1 } });
        const out: Record<string, Json> = {};
        for (const [field, text] of Object.entries(doc?.state ?? {})) {
          // defineProperty, so that a key named `__proto__` is a key and not the prototype.
          Object.defineProperty(out, decodeKey(field), { value: decodeJson(text), enumerable: true, writable: true, configurable: true });
        }
        return out;
      }),
  };
}
