import { sql } from 'kysely';
import type { DeleteCondition } from '@cairn/core/backend';
import { decodeText, encodeText } from './codec/text.js';
import { guard, inList, rows, type StoreContext } from './context.js';
import { runArtefactTables } from './run-artefact-tables.js';

/**
 * `runs.deleteMany`: one transaction for the whole batch (one commit where `runs.delete` takes one
 * per run). It locks the listed runs that still meet the condition (in id order, so two pruners
 * never wait on each other in a circle), then removes their artefacts (`runArtefactTables`) and the
 * runs themselves with one statement per table. Runs that are missing or no longer meet the
 * condition are not locked and not touched.
 */
export function deleteRuns(ctx: StoreContext) {
  const { t, dialect } = ctx;
  return (runIds: readonly string[], condition: DeleteCondition) =>
    guard('runs.deleteMany', async (): Promise<string[]> => {
      if (runIds.length === 0 || condition.statuses.length === 0) return [];
      const wanted = [...new Set(runIds.map(encodeText))];
      return dialect.transaction(ctx.db, async (trx) => {
        const locked = await rows(
          trx,
          sql<{ id: string }>`select id from ${t.runs} where id in ${inList(wanted)} and status in ${inList(condition.statuses)}
            and updated_at < ${condition.updatedBefore} order by id ${dialect.lockForUpdate()}`,
        );
        if (locked.length === 0) return [];
        const ids = inList(locked.map((row) => String(row.id)));
        for (const table of runArtefactTables(t)) {
          await sql`delete from ${table} where run_id in ${ids}`.execute(trx);
        }
        await sql`delete from ${t.runs} where id in ${ids}`.execute(trx);
        return locked.map((row) => decodeText(String(row.id)));
      });
    });
}
