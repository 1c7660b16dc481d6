import { sql } from 'kysely';

import { liftsPause, pausableRun, pauseMark, type PauseScope, type PauseStore, type WorkflowPause } from '@cairn/core/backend';
import { decodeJson, encodeJson, encodeJsonRequired } from './codec/json.js';
import { decodeText, encodeText } from './codec/text.js';
import { TERMINAL_SQL, affected, first, guard, insertedOnce, rows, type StoreContext } from './context.js';
import { updateRun } from './run-statement-writes.js';
import { readRun } from './runs.js';
import type { PauseRow } from './schema/tables.js';

// A compare-and-set that lost to a concurrent pause or resume reads the run again; a few rounds
// settle any real race (each loser sees the winner's write).
const ROUNDS = 5;

function toWorkflowPause(row: PauseRow): WorkflowPause {
  const record = decodeJson<WorkflowPause>(row.record_json) as WorkflowPause;
  return { ...record, workflow: decodeText(row.workflow) };
}

/**
 * The store's `pauses` noun (`cairn_0015_run_pause`). A run's pause is `runs.paused_json`, which
 * the claim statement (MySQL/MariaDB: the `run_claim` procedure) and the due scan require NULL;
 * pausing also clears `due_at` so the due index no longer holds the run, and resuming sets it as a
 * wake-up does (the lease expiry for a running run). Each change is one conditional `UPDATE`.
 */
export function pausesOf(ctx: StoreContext): PauseStore {
  const { t, dialect } = ctx;
  const readPause = (workflow: string) =>
    first(ctx.db, sql<PauseRow>`select * from ${t.pauses} where workflow = ${encodeText(workflow)}`).then((row) =>
      row === undefined ? undefined : toWorkflowPause(row),
    );
  // `wake_at` lowered to `now`; MySQL assigns left to right, so `due_at` comes first (see wakeSet).
  const lowered = (now: number) => sql`case when wake_at is null or wake_at > ${now} then ${now} else wake_at end`;
  return {
    pauseRun: (runId, pause, now) =>
      guard('pauses.pauseRun', async () => {
        const id = encodeText(runId);
        const run = await updateRun(
          ctx,
          runId,
          sql`update ${t.runs} set paused_json = ${encodeJson(pauseMark(pause, now) as never)}, due_at = null
            where id = ${id} and status not in ${TERMINAL_SQL} and paused_json is null`,
        );
        if (run !== undefined) return { run, changed: true };
        return { run: pausableRun(runId, await readRun(ctx, ctx.db, runId)), changed: false };
      }),

    resumeRun: (runId, now, scope?: PauseScope) =>
      guard('pauses.resumeRun', async () => {
        for (let round = 0; ; round++) {
          const current = pausableRun(runId, await readRun(ctx, ctx.db, runId));
          if (!liftsPause(current, scope)) return { run: current, changed: false };
          // Compare-and-set on the mark as read: a pause of another scope written meanwhile stays.
          const run = await updateRun(
            ctx,
            runId,
            sql`update ${t.runs} set due_at = case when status = 'running' then lease_expires_at else ${lowered(now)} end,
                wake_at = ${lowered(now)}, updated_at = ${now}, paused_json = null
              where id = ${encodeText(runId)} and status not in ${TERMINAL_SQL} and paused_json = ${encodeJson(current.paused as never)}`,
          );
          if (run !== undefined) return { run, changed: true };
          if (round >= ROUNDS) return { run: pausableRun(runId, await readRun(ctx, ctx.db, runId)), changed: false };
        }
      }),

    pauseWorkflow: (workflow, now, reason) =>
      guard('pauses.pauseWorkflow', async () => {
        const pause: WorkflowPause = reason === undefined ? { workflow, at: now } : { workflow, at: now, reason };
        const insert = sql`insert into ${t.pauses} (workflow, record_json)
          values (${encodeText(workflow)}, ${encodeJsonRequired(pause as never)}) ${dialect.onConflictDoNothing()}`;
        // Not inserted: the workflow is paused already.
        if (await insertedOnce(ctx, insert)) return { pause, changed: true };
        const existing = await readPause(workflow);
        // Resumed between the two statements: this pause is not stored; report it as not written.
        return { pause: existing ?? pause, changed: false };
      }),

    resumeWorkflow: (workflow) =>
      guard('pauses.resumeWorkflow', async () => (await affected(ctx.db, sql`delete from ${t.pauses} where workflow = ${encodeText(workflow)}`)) > 0),

    getWorkflowPause: (workflow) => guard('pauses.getWorkflowPause', () => readPause(workflow)),

    listWorkflowPauses: () =>
      guard('pauses.listWorkflowPauses', async () =>
        (await rows(ctx.db, sql<PauseRow>`select * from ${t.pauses} order by workflow limit 1000`)).map(toWorkflowPause),
      ),
  };
}
