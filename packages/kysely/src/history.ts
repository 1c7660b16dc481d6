import { sql } from 'kysely';
import type { AttemptRecord } from '@cairn/core/backend';
import { toAttemptRecord } from './codec/rows.js';
import { encodeText } from './codec/text.js';
import { guard, rows, type StoreContext } from './context.js';
import type { AttemptRow } from './schema/tables.js';

/**
 * `history.list`: every attempt of the run, oldest first (started_at, step seq, attempt), served by
 * the index (run_id, started_at, step_seq, attempt). The step's seq is stored on each attempt, so
 * no join and no count is needed.
 */
export function listHistory(ctx: StoreContext) {
  return (runId: string) =>
    guard('history.list', async (): Promise<AttemptRecord[]> => {
      const found = await rows(
        ctx.db,
        sql<AttemptRow>`select * from ${ctx.t.attempts} where run_id = ${encodeText(runId)} order by started_at, step_seq, attempt`,
      );
      return found.map(toAttemptRecord);
    });
}
