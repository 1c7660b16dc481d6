import { sql } from 'kysely';

import {
  checkWritableRun,
  decideStreamAppend,
  type Fence,
  type NewStreamEntry,
  type StreamEntry,
  type StreamStore,
  type StreamSummary,
} from '@cairn/core/backend';
import { decodeJson, encodeJsonRequired } from './codec/json.js';
import { decodeText, encodeText, keyHash } from './codec/text.js';
import { first, guard, rows, type StoreContext } from './context.js';
import type { StreamEntryRow } from './schema/tables.js';

const flag = (value: unknown): boolean => value === true || Number(value) === 1;

function toEntry(row: StreamEntryRow): StreamEntry {
  const stream = decodeText(row.stream);
  const index = Number(row.idx);
  const writtenAt = Number(row.written_at);
  if (flag(row.closed)) return { stream, index, closed: true, writtenAt };
  return { stream, index, data: decodeJson(row.data_json) ?? null, writtenAt };
}

/**
 * `streams` over `stream_entries` (`cairn_0013_streams`). `append` is one transaction that locks the
 * run row (fence and terminal check; SQLite: the write transaction is exclusive already), then reads
 * the stream's last entry, so the appends of one run take turns, then inserts one row: a chunk costs
 * one transaction of three statements. The last entry is read by a statement of its own, after the
 * lock is held: in the locking statement it was read before the lock wait (PostgreSQL evaluates a
 * statement's subqueries under the snapshot it took when it started, and read committed takes it
 * before waiting), so two appends of one index both saw the stream without the other's entry and
 * the second failed on the primary key. The primary key (run_id, stream_hash, idx) backs the lock.
 */
export function streamsOf(ctx: StoreContext): StreamStore {
  const { t, dialect } = ctx;
  return {
    append: (runId: string, fence: Fence, entry: NewStreamEntry, now: number) =>
      guard('streams.append', () =>
        dialect.transaction(ctx.db, async (trx): Promise<{ created: boolean }> => {
          const id = encodeText(runId);
          const stored = encodeText(entry.stream);
          const hash = keyHash(stored);
          // The run row, locked; then, under the lock (a statement of its own, so that it sees what the
          // append before this one committed), the stream's last entry.
          const run = await first(
            trx,
            sql<{ status: string; fence: number | string }>`select status, fence from ${t.runs} where id = ${id} ${dialect.lockForUpdate()}`,
          );
          checkWritableRun(runId, fence, run === undefined ? undefined : { status: run.status, fence: Number(run.fence) });
          const last = await first(
            trx,
            sql<{
              idx: number | string;
              closed: number | string | boolean;
            }>`select idx, closed from ${t.stream_entries} where run_id = ${id} and stream_hash = ${hash} order by idx desc limit 1`,
          );
          const lastIdx = last?.idx ?? null;
          const closed = lastIdx !== null && flag(last?.closed);
          const length = lastIdx === null ? 0 : closed ? Number(lastIdx) : Number(lastIdx) + 1;
          if (decideStreamAppend(runId, length, closed, entry) === 'exists') return { created: false };
          const data = entry.close === true ? null : encodeJsonRequired(entry.data);
          await sql`insert into ${t.stream_entries} (run_id, stream_hash, idx, stream, data_json, closed, written_at)
            values (${id}, ${hash}, ${entry.index}, ${stored}, ${data}, ${entry.close === true ? 1 : 0}, ${now})`.execute(trx);
          return { created: true };
        }),
      ),

    read: (runId: string, stream: string, from: number, limit: number) =>
      guard('streams.read', async (): Promise<StreamEntry[]> => {
        const found = await rows(
          ctx.db,
          sql<StreamEntryRow>`select stream, idx, data_json, closed, written_at from ${t.stream_entries}
            where run_id = ${encodeText(runId)} and stream_hash = ${keyHash(encodeText(stream))} and idx >= ${from} order by idx limit ${limit}`,
        );
        return found.map(toEntry);
      }),

    list: (runId: string) =>
      guard('streams.list', async (): Promise<StreamSummary[]> => {
        // The last entry of each stream: its index and whether it is the end marker.
        const found = await rows(
          ctx.db,
          sql<{ stream: string; idx: number | string; closed: number | string | boolean }>`select e.stream, e.idx, e.closed from ${t.stream_entries} e
            join (select stream_hash, max(idx) as last_idx from ${t.stream_entries} where run_id = ${encodeText(runId)} group by stream_hash) m
            on e.stream_hash = m.stream_hash and e.idx = m.last_idx
            where e.run_id = ${encodeText(runId)} order by e.stream`,
        );
        return found.map((r) => {
          const closed = flag(r.closed);
          return { stream: decodeText(r.stream), length: closed ? Number(r.idx) : Number(r.idx) + 1, closed };
        });
      }),
  };
}
