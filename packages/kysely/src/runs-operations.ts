import { sql } from 'kysely';
import { CairnError, type Json, type RunRecord, type RunStatus } from '@cairn/core';
import { decodeEndedCursor, encodeEndedCursor, type EndedRun, type EndedRunPage, type EndedRunQuery, type RunReopen } from '@cairn/core/backend';
import { runNotFound } from './context.js';
import { encodeJson } from './codec/json.js';
import { toRunRecord } from './codec/rows.js';
import { decodeText, encodeText, keyHash } from './codec/text.js';
import { first, guard, rows, type StoreContext } from './context.js';
import type { RunRow } from './schema/tables.js';

/** `runs.findByIdempotencyKey`: one read of the unique (workflow, idempotency_hash) index. */
export function findByIdempotencyKey(ctx: StoreContext) {
  return (workflow: string, idempotencyKey: string) =>
    guard('runs.findByIdempotencyKey', async (): Promise<RunRecord | undefined> => {
      const row = await first(
        ctx.db,
        sql<RunRow>`select * from ${ctx.t.runs} where workflow = ${encodeText(workflow)} and idempotency_hash = ${keyHash(encodeText(idempotencyKey))}`,
      );
      return row === undefined ? undefined : toRunRecord(row);
    });
}

/**
 * `runs.reopen`: one transaction that locks the run row, checks it is failed or cancelled at the
 * expected fence, deletes the forgotten steps' attempts and steps, and rewrites the run row.
 */
export function reopenRun(ctx: StoreContext) {
  const { t, dialect } = ctx;
  return (runId: string, reopen: RunReopen, now: number) =>
    guard('runs.reopen', () =>
      dialect.transaction(ctx.db, async (trx): Promise<RunRecord> => {
        const id = encodeText(runId);
        const row = await first(trx, sql<RunRow>`select * from ${t.runs} where id = ${id} ${dialect.lockForUpdate()}`);
        if (row === undefined) throw runNotFound(runId);
        const run = toRunRecord(row);
        if ((run.status !== 'failed' && run.status !== 'cancelled') || run.fence !== reopen.fence) {
          throw new CairnError(
            'RUN_CONFLICT',
            `Run ${runId} is ${run.status} (fence ${run.fence}); only a failed or cancelled run at fence ${reopen.fence} can be reopened`,
            {
              data: { runId, status: run.status },
            },
          );
        }
        for (const key of reopen.forget) {
          const hash = keyHash(encodeText(key));
          await sql`delete from ${t.attempts} where run_id = ${id} and key_hash = ${hash}`.execute(trx);
          await sql`delete from ${t.steps} where run_id = ${id} and key_hash = ${hash}`.execute(trx);
        }
        const retries = encodeJson([...(run.retries ?? []), reopen.retry] as unknown as Json);
        const deadline = reopen.deadline === undefined ? sql`deadline` : sql`${reopen.deadline}`;
        await sql`update ${t.runs} set status = 'pending', fence = fence + 1, lease_owner = null, lease_expires_at = null,
          output_json = null, error_json = null, cancel_requested = 0, cancel_reason = null, wake_at = ${now}, due_at = ${now},
          deadline = ${deadline}, retries_json = ${retries}, updated_at = ${now} where id = ${id}`.execute(trx);
        const updated = await first(trx, sql<RunRow>`select * from ${t.runs} where id = ${id}`);
        return toRunRecord(updated as RunRow);
      }),
    );
}

/** `runs.listEnded`: a range of the (status, updated_at, id) index, oldest first. */
export function listEnded(ctx: StoreContext) {
  return (query: EndedRunQuery) =>
    guard('runs.listEnded', async (): Promise<EndedRunPage> => {
      const position = query.cursor === undefined ? undefined : decodeEndedCursor(query.cursor);
      // The cursor carries the stored id, which is what the keyset condition compares.
      const after = position === undefined ? sql`` : sql`and (updated_at > ${position.at} or (updated_at = ${position.at} and id > ${position.id}))`;
      const found = await rows(
        ctx.db,
        sql<
          Pick<RunRow, 'id' | 'workflow' | 'status' | 'updated_at' | 'parent_run_id' | 'parent_step_key'>
        >`select id, workflow, status, updated_at, parent_run_id, parent_step_key
          from ${ctx.t.runs} where status = ${query.status} and updated_at < ${query.updatedBefore} ${after}
          order by updated_at, id limit ${query.limit + 1}`,
      );
      const runs = found.slice(0, query.limit).map((row) => {
        const ended: EndedRun = {
          id: decodeText(String(row.id)),
          workflow: decodeText(String(row.workflow)),
          status: row.status as RunStatus,
          updatedAt: Number(row.updated_at),
        };
        if (row.parent_run_id !== null && row.parent_step_key !== null)
          ended.parent = { runId: decodeText(String(row.parent_run_id)), stepKey: decodeText(String(row.parent_step_key)) };
        return ended;
      });
      const last = found[query.limit - 1];
      return found.length > query.limit && last ? { runs, nextCursor: encodeEndedCursor({ at: Number(last.updated_at), id: String(last.id) }) } : { runs };
    });
}
