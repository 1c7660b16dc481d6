import { CairnError, isTerminalRunStatus } from '@cairn/core';
import type { EventStore } from '@cairn/core';
import type { StoreContext } from './context.js';
import { toEventRecord } from './documents.js';
import type { EventDoc } from './documents.js';
import { contention, guard } from './errors.js';
import { encodeJson } from './json-codec.js';
import { encodeKey } from './key-codec.js';
import { MAX_RETRIES, tryWake } from './run-wake.js';

/**
 * The `events` part of the store. An event is the field `events.<encoded name>` of its run
 * document, so storing it (only if absent: first write wins) and waking the run are ONE atomic
 * update; there is no second document whose write a crash could lose.
 */
export function createEventStore(ctx: StoreContext): EventStore {
  return {
    deliver: (runId, name, payload, now) =>
      guard('events.deliver', () =>
        ctx.exclusive(runId, async () => {
          const path = `events.${encodeKey(name)}`;
          const event: EventDoc = { payload: encodeJson(payload), deliveredAt: now };
          for (let i = 0; i < MAX_RETRIES; i++) {
            const extra = { filter: { [path]: { $exists: false } }, set: { [path]: event } };
            if ((await tryWake(ctx, runId, now, extra, false)).hit) return { delivered: true };
            const doc = await ctx.runs.findOne({ _id: runId }, { projection: { status: 1, [path]: 1 } });
            if (!doc) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
            if (isTerminalRunStatus(doc.status) || doc.events?.[encodeKey(name)] !== undefined) return { delivered: false };
          }
          throw contention('events.deliver', runId);
        }),
      ),
    get: (runId, name) =>
      guard('events.get', async () => {
        const field = encodeKey(name);
        const doc = await ctx.runs.findOne({ _id: runId }, { projection: { [`events.${field}`]: 1 } });
        const event = doc?.events?.[field];
        return event ? toEventRecord(runId, name, event) : undefined;
      }),
  };
}
