import type { Json } from '@cairn/core';
import { streamConflict, type StreamEntry, type StreamStore, type StreamSummary } from '@cairn/core/backend';
import { callRunScript, writeError, type StoreContext } from './context.js';

// An element of a stream's list: `<kind>:<writtenAt>:<json>` (see APPEND_STREAM).
function parseEntry(stream: string, index: number, text: string): StreamEntry {
  const kind = text.slice(0, 1);
  const rest = text.slice(2);
  const colon = rest.indexOf(':');
  const writtenAt = Number(rest.slice(0, colon));
  if (kind === 'c') return { stream, index, closed: true, writtenAt };
  return { stream, index, data: JSON.parse(rest.slice(colon + 1)) as Json, writtenAt };
}

/** The `streams` part: one list per stream, appended by a fenced script (`APPEND_STREAM`). */
export function createStreamStore(ctx: StoreContext): StreamStore {
  const list = (runId: string, stream: string) => `${ctx.keys.run(runId)}:st:${stream}|`;
  return {
    async append(runId, fence, entry, now) {
      const args = [
        fence === null ? '' : String(fence),
        String(now),
        entry.stream,
        String(entry.index),
        entry.close === true ? 'c' : 'd',
        entry.close === true ? '' : JSON.stringify(entry.data),
      ];
      const reply = await callRunScript(ctx, ctx.scripts.appendStream, runId, args);
      if (reply.code === 'STREAM_CONFLICT') throw streamConflict(runId, entry, Number(reply.payload[0]), reply.payload[1] === '1');
      if (reply.code !== 'OK') throw writeError(runId, reply.code, reply.payload, fence);
      return { created: reply.payload[0] === '1' };
    },

    async read(runId, stream, from, limit) {
      const texts = await ctx.caller.command('streams.read', 'LRANGE', [list(runId, stream), from, from + limit - 1]);
      return (Array.isArray(texts) ? texts : []).map((text, i) => parseEntry(stream, from + i, String(text)));
    },

    async list(runId) {
      const names = await ctx.caller.command('streams.list', 'SMEMBERS', [`${ctx.keys.run(runId)}:streams`]);
      const out: StreamSummary[] = [];
      for (const stream of (Array.isArray(names) ? names : []).map(String)) {
        const n = Number(await ctx.caller.command('streams.list', 'LLEN', [list(runId, stream)]));
        const last = n === 0 ? undefined : await ctx.caller.command('streams.list', 'LINDEX', [list(runId, stream), -1]);
        const closed = typeof last === 'string' && last.startsWith('c:');
        out.push({ stream, length: closed ? n - 1 : n, closed });
      }
      return out.sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0));
    },
  };
}
