import { decideStreamAppend, type StreamEntry, type StreamStore, type StreamSummary } from '@cairn/core/backend';
import type { StoreContext } from './context.js';
import { assertWritable, guard, isDuplicateKey } from './errors.js';
import { decodeJson, encodeJson } from './json-codec.js';
import { decodeKey, encodeKey } from './key-codec.js';

/**
 * One entry of a run's stream in `<prefix>stream_entries`: `_id` names its place (run, stream,
 * index) so two writers of one place store one document; `r`, `s` (the encoded name) and `i` are
 * indexed for reads; `d` the chunk as JSON text, absent on the end marker (`c: true`); `at` its time.
 */
export interface StreamEntryDoc {
  _id: string;
  r: string;
  s: string;
  i: number;
  d?: string;
  c?: true;
  at: number;
}

const placeOf = (runId: string, stream: string, index: number): string => JSON.stringify([runId, stream, index]);

function toEntry(stream: string, doc: StreamEntryDoc): StreamEntry {
  if (doc.c === true) return { stream, index: doc.i, closed: true, writtenAt: doc.at };
  return { stream, index: doc.i, data: decodeJson(doc.d ?? 'null'), writtenAt: doc.at };
}

/**
 * The `streams` part of the store, in its own collection (a stream may outgrow the run document's
 * 16 MiB). `append` checks the run (fence, terminal), reads the stream's last entry and inserts the
 * entry under an `_id` naming its place: of two writers of one place exactly one inserts. The check
 * and the insert are two operations (no multi-document transactions on FerretDB): a writer that
 * loses its lease between them can still insert the entry it was writing, which is the entry any
 * execution of the run writes at that place (entries are positional, written by deterministic
 * workflow code). `runs.delete` removes the run's entries after its document.
 */
export function createStreamStore(ctx: StoreContext): StreamStore {
  return {
    append: (runId, fence, entry, now) =>
      guard('streams.append', () =>
        ctx.exclusive(runId, async () => {
          const run = await ctx.runs.findOne({ _id: runId }, { projection: { fence: 1, status: 1, sx: 1 } });
          assertWritable(run, runId, fence);
          // Marked before its first entry is written, so that `runs.delete` knows to delete entries.
          if (run?.sx !== true) await ctx.runs.updateOne({ _id: runId }, { $set: { sx: true } });
          const s = encodeKey(entry.stream);
          const last = await ctx.streamEntries
            .find({ r: runId, s }, { projection: { i: 1, c: 1 } })
            .sort({ i: -1 })
            .limit(1)
            .next();
          const closed = last?.c === true;
          const length = last === null ? 0 : closed ? last.i : last.i + 1;
          if (decideStreamAppend(runId, length, closed, entry) === 'exists') return { created: false };
          const doc: StreamEntryDoc = { _id: placeOf(runId, entry.stream, entry.index), r: runId, s, i: entry.index, at: now };
          if (entry.close === true) doc.c = true;
          else doc.d = encodeJson(entry.data);
          try {
            await ctx.streamEntries.insertOne(doc);
          } catch (error) {
            // Another writer stored this place first: its entry stands.
            if (isDuplicateKey(error)) return { created: false };
            throw error;
          }
          return { created: true };
        }),
      ),
    read: (runId, stream, from, limit) =>
      guard('streams.read', async (): Promise<StreamEntry[]> => {
        const docs = await ctx.streamEntries
          .find({ r: runId, s: encodeKey(stream), i: { $gte: from } })
          .sort({ i: 1 })
          .limit(limit)
          .toArray();
        return docs.map((doc) => toEntry(stream, doc));
      }),
    list: (runId) =>
      guard('streams.list', async (): Promise<StreamSummary[]> => {
        // Index and marker of every entry (no data): the last one of each stream says its length.
        const heads = new Map<string, { last: number; closed: boolean }>();
        for await (const doc of ctx.streamEntries.find({ r: runId }, { projection: { s: 1, i: 1, c: 1 } })) {
          const head = heads.get(doc.s);
          if (head === undefined || doc.i > head.last) heads.set(doc.s, { last: doc.i, closed: doc.c === true });
        }
        return [...heads.entries()]
          .map(([s, { last, closed }]) => ({ stream: decodeKey(s), length: closed ? last : last + 1, closed }))
          .sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0));
      }),
  };
}
