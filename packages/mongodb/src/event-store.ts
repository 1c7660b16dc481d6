import { isTerminalRunStatus } from '@cairn/core';
import { runNotFound, type EventDelivery, type EventStore } from '@cairn/core/backend';

import type { Filter } from 'mongodb';
import type { StoreContext } from './context.js';
import { toEventRecord } from './documents.js';
import type { EventDoc, RunDoc } from './documents.js';
import { contention, guard } from './errors.js';
import { encodeJson } from './json-codec.js';
import { encodeKey } from './key-codec.js';
import { MAX_RETRIES, tryWake } from './run-wake.js';

/**
 * The `events` part of the store. The messages of a name live in the run document at
 * `messages.<encoded name>` (`n`: how many, `m<seq>`: each one) and a send's idempotency key at
 * `eventKeys.<encoded key>`, so appending a message, recording its key and waking the run are ONE
 * atomic update: a compare-and-set on the count (and on the key's absence) that retries when
 * another send won. An event a release before messages stored at `events.<encoded name>` counts
 * as message 1 of its name.
 */
export function createEventStore(ctx: StoreContext): EventStore {
  return {
    deliver: (runId, name, payload, now, options) =>
      guard('events.deliver', () =>
        ctx.exclusive(runId, async (): Promise<EventDelivery> => {
          const field = encodeKey(name);
          const path = `messages.${field}`;
          const legacy = `events.${field}`;
          const key = options?.idempotencyKey;
          const keyField = key === undefined ? undefined : encodeKey(key);
          const keyPath = keyField === undefined ? undefined : `eventKeys.${keyField}`;
          const projection: Record<string, 1> = { status: 1, [`${path}.n`]: 1, [legacy]: 1 };
          if (keyPath) projection[keyPath] = 1;
          for (let i = 0; i < MAX_RETRIES; i++) {
            const doc = await ctx.runs.findOne({ _id: runId }, { projection });
            if (!doc) throw runNotFound(runId);
            const earlier = keyField === undefined ? undefined : doc.eventKeys?.[keyField];
            if (earlier !== undefined) return { delivered: false, duplicate: true, seq: earlier.seq };
            if (isTerminalRunStatus(doc.status)) return { delivered: false, duplicate: false };
            const counted = doc.messages?.[field]?.n;
            const hasLegacy = doc.events?.[field] !== undefined;
            const count = counted ?? (hasLegacy ? 1 : 0);
            const seq = count + 1;
            // The count this send saw must still hold when it writes: else another send took `seq`.
            const filter: Record<string, unknown> =
              counted === undefined ? { [`${path}.n`]: { $exists: false }, [legacy]: { $exists: hasLegacy } } : { [`${path}.n`]: counted };
            const message: EventDoc = { payload: encodeJson(payload), deliveredAt: now };
            if (key !== undefined) message.key = key;
            const set: Record<string, unknown> = { [`${path}.n`]: seq, [`${path}.m${seq}`]: message };
            if (keyPath) {
              filter[keyPath] = { $exists: false };
              set[keyPath] = { name, seq };
            }
            if ((await tryWake(ctx, runId, now, { filter: filter as Filter<RunDoc>, set }, false)).hit) return { delivered: true, duplicate: false, seq };
          }
          throw contention('events.deliver', runId);
        }),
      ),
    get: (runId, name, seq) =>
      guard('events.get', async () => {
        const field = encodeKey(name);
        const projection: Record<string, 1> = { [`messages.${field}.m${seq}`]: 1 };
        if (seq === 1) projection[`events.${field}`] = 1;
        const doc = await ctx.runs.findOne({ _id: runId }, { projection });
        const message = doc?.messages?.[field]?.[`m${seq}`] ?? (seq === 1 ? doc?.events?.[field] : undefined);
        return message ? toEventRecord(runId, name, seq, message) : undefined;
      }),
  };
}
