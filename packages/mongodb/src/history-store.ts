import type { AttemptRecord, HistoryStore } from '@cairn/core/backend';
import type { StoreContext } from './context.js';
import { toAttemptRecord } from './documents.js';
import { guard } from './errors.js';
import { decodeKey } from './key-codec.js';

/**
 * The `history` part of the store: every attempt of every step, from the one read of the run's
 * steps (attempts live inside their step), ordered by `startedAt`, then step `seq`, then attempt.
 */
export function createHistoryStore(ctx: StoreContext): HistoryStore {
  return {
    list: (runId) =>
      guard('history.list', async () => {
        const doc = await ctx.runs.findOne({ _id: runId }, { projection: { steps: 1 } });
        const rows: Array<{ seq: number; record: AttemptRecord }> = [];
        for (const [field, step] of Object.entries(doc?.steps ?? {})) {
          const key = decodeKey(field);
          for (const attempt of Object.values(step.attempts ?? {})) {
            rows.push({ seq: step.seq, record: toAttemptRecord(runId, key, attempt) });
          }
        }
        return rows.sort((a, b) => a.record.startedAt - b.record.startedAt || a.seq - b.seq || a.record.attempt - b.record.attempt).map((row) => row.record);
      }),
  };
}
