import type { EventStore, Fence, Json, StateStore } from '@cairn/core';
import { encodeEvent, parseEvent, toHash } from './codec.js';
import { callRunScript, runWrite, writeError, type StoreContext } from './context.js';

/** The `state` part: one hash field per key, written by HSET inside a fenced script. */
export function createStateStore(ctx: StoreContext): StateStore {
  return {
    async set(runId, fence: Fence, key, value: Json, now) {
      const reply = await callRunScript(ctx, ctx.scripts.setState, runId, [
        fence === null ? '' : String(fence),
        String(now),
        key,
        JSON.stringify(value),
      ]);
      if (reply.code !== 'OK') throw writeError(runId, reply.code, reply.payload, fence);
    },

    async get(runId) {
      const hash = toHash(await ctx.caller.command('state.get', 'HGETALL', [ctx.keys.state(runId)]));
      // fromEntries defines own properties, so even a key named `__proto__` comes back as written.
      return Object.fromEntries(Object.entries(hash).map(([key, text]) => [key, JSON.parse(text) as Json]));
    },
  };
}

/** The `events` part: first delivery of a name wins, and wakes the run in the same script. */
export function createEventStore(ctx: StoreContext): EventStore {
  return {
    async deliver(runId, name, payload, now) {
      const reply = await runWrite(ctx, ctx.scripts.deliverEvent, runId, [String(now), name, encodeEvent(payload, now)], now);
      if (reply.code !== 'OK') throw writeError(runId, reply.code, reply.payload);
      return { delivered: reply.payload[0] === '1' };
    },

    async get(runId, name) {
      const text = await ctx.caller.command('events.get', 'HGET', [ctx.keys.events(runId), name]);
      return typeof text === 'string' ? parseEvent(runId, name, text) : undefined;
    },
  };
}
