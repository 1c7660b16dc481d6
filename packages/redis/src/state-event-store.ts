import type { Json } from '@cairn/core';
import type { EventStore, Fence, StateStore } from '@cairn/core/backend';
import { encodeEvent, parseEvent, toHash } from './codec.js';
import { callRunScript, runWrite, writeError, type StoreContext } from './context.js';

/** The `state` part: one hash field per key, written by HSET inside a fenced script. */
export function createStateStore(ctx: StoreContext): StateStore {
  return {
    async set(runId, fence: Fence, key, value: Json, now) {
      const reply = await callRunScript(ctx, ctx.scripts.setState, runId, [fence === null ? '' : String(fence), String(now), key, JSON.stringify(value)]);
      if (reply.code !== 'OK') throw writeError(runId, reply.code, reply.payload, fence);
    },

    async get(runId) {
      const hash = toHash(await ctx.caller.command('state.get', 'HGETALL', [ctx.keys.state(runId)]));
      // fromEntries defines own properties, so even a key named `__proto__` comes back as written.
      return Object.fromEntries(Object.entries(hash).map(([key, text]) => [key, JSON.parse(text) as Json]));
    },
  };
}

/**
 * The `events` part: every message is kept, numbered per (run, name), and wakes the run in the
 * same script (see `DELIVER_EVENT` for the layout).
 */
export function createEventStore(ctx: StoreContext): EventStore {
  return {
    async deliver(runId, name, payload, now, options) {
      const key = options?.idempotencyKey;
      const args = [String(now), name, encodeEvent(payload, now, key), key === undefined ? '' : '1', key ?? ''];
      const reply = await runWrite(ctx, ctx.scripts.deliverEvent, runId, args, now);
      if (reply.code !== 'OK') throw writeError(runId, reply.code, reply.payload);
      const [stored, seq] = reply.payload as string[];
      if (stored === '1') return { delivered: true, duplicate: false, seq: Number(seq) };
      return seq ? { delivered: false, duplicate: true, seq: Number(seq) } : { delivered: false, duplicate: false };
    },

    async get(runId, name, seq) {
      const text = await ctx.caller.command('events.get', 'HGET', [ctx.keys.messages(runId), `m:${seq}:${name}`]);
      if (typeof text === 'string') return parseEvent(runId, name, seq, text);
      if (seq !== 1) return undefined;
      // An event stored by a release before messages is message 1 of its name.
      const legacy = await ctx.caller.command('events.get', 'HGET', [ctx.keys.events(runId), name]);
      return typeof legacy === 'string' ? parseEvent(runId, name, 1, legacy) : undefined;
    },
  };
}
