import { CompiledQuery, sql } from 'kysely';
import { CairnError, type StepRecord } from '@cairn/core';
import type { Fence, NewStep, StepTransition } from '@cairn/core/backend';
import { toStepRecord } from '../codec/rows.js';
import { checkWritable, first, type StoreContext } from '../context.js';
import type { StepWrites } from '../dialect/types.js';
import { stepInsertArgs, stepTransitionArgs } from '../codec/step-args.js';
import { stepIdentity, type StepIdentity } from '../codec/step-identity.js';
import { SQLITE_ATTEMPT_COLUMNS } from './triggers.js';
import { CAIRN_MIGRATION_NAMES } from '../schema/migration-names.js';
import { missingStepColumn } from '../schema/missing-step-column.js';
import { STEP_COLUMNS, TERMINAL, type StepRow } from '../schema/tables.js';
import { stepConflict } from '../step-conflict.js';

const NOT_TERMINAL = `r.status not in (${TERMINAL.map((s) => `'${s}'`).join(', ')})`;
// `? is null or r.fence = ?`: an unfenced write (a queued step worker) passes NULL twice.
const RUN_WRITABLE = `r.id = ? and (? is null or r.fence = ?) and ${NOT_TERMINAL}`;

// Statement texts per table prefix, built once: a step write compiles no SQL.
const texts = new Map<string, { insert: string; transition: string }>();

function statements(ctx: StoreContext): { insert: string; transition: string } {
  let found = texts.get(ctx.names.prefix);
  if (found === undefined) {
    const steps = `"${ctx.names.steps}"`;
    const runs = `"${ctx.names.runs}"`;
    // The trigger inputs: attempt 1's worker, and for a step inserted finished its outcome and start.
    const insertColumns = [...STEP_COLUMNS, 'start_worker', 'end_status', 'end_output_json', 'end_error_json', 'start_at'];
    found = {
      // The fence check and the insert are one statement; a trigger opens attempt 1 (running) or
      // records it (a step inserted finished).
      insert: `insert into ${steps} (${insertColumns.join(', ')})
        select ${insertColumns.map(() => '?').join(', ')} from ${runs} r where ${RUN_WRITABLE}
        on conflict (run_id, key_hash) do nothing returning ${STEP_COLUMNS.join(', ')}`,
      // Compare-and-set of the step, guarded by the run's fence and status; the trigger writes the
      // attempt records.
      transition: `update ${steps} set status = ?, attempt = coalesce(?, attempt),
          output_json = case when ? = 1 then ? else output_json end,
          error_json = case when ? = 1 then ? else error_json end,
          wake_at = case ? when 1 then ? when 2 then null else wake_at end,
          child_run_id = coalesce(?, child_run_id), turn = coalesce(?, turn), updated_at = ?,
          end_status = ?, end_output_json = ?, end_error_json = ?, start_worker = ?
        where run_id = ? and key_hash = ? and attempt = ? and instr(',' || ? || ',', ',' || status || ',') > 0
          and exists (select 1 from ${runs} r where ${RUN_WRITABLE})
        returning ${STEP_COLUMNS.join(', ')}`,
    };
    texts.set(ctx.names.prefix, found);
  }
  return found;
}

/** The run's fence and status with the step, read after a write that changed nothing. */
function readRunAndStep(ctx: StoreContext, id: StepIdentity) {
  return first(
    ctx.db,
    sql<
      Partial<StepRow> & { r_fence: unknown; r_status: unknown }
    >`select r.fence as r_fence, r.status as r_status, ${sql.raw(STEP_COLUMNS.map((c) => `s.${c}`).join(', '))}
      from ${ctx.t.runs} r left join ${ctx.t.steps} s on s.run_id = r.id and s.key_hash = ${id.keyHash}
      where r.id = ${id.runId}`,
  );
}

async function execute(ctx: StoreContext, text: string, parameters: unknown[]): Promise<StepRow | undefined> {
  try {
    return (await ctx.db.executeQuery<StepRow>(CompiledQuery.raw(text, parameters))).rows[0];
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    // "no such column: x" (UPDATE) or "table t has no column named x" (INSERT).
    const lacks = (column: string) => message.includes(`no such column: ${column}`) || message.includes(`no column named ${column}`);
    if (SQLITE_ATTEMPT_COLUMNS.some(lacks)) {
      throw new CairnError(
        'STORE_ERROR',
        `The step tables lack the columns of ${CAIRN_MIGRATION_NAMES[1]}: run Cairn's migrations (migrateToLatest(db), or cairnMigrations() in your Migrator)`,
        { cause: error },
      );
    }
    const missing = missingStepColumn(error);
    if (missing !== undefined) throw missing;
    throw error;
  }
}

/**
 * `steps.insert` on SQLite: ONE statement checks the run and inserts the step (and, through the
 * trigger, attempt 1). When it inserts nothing, one read tells why: a stale fence, a terminal or
 * missing run, or a key that exists.
 */
async function insertStepSqlite(ctx: StoreContext, runId: string, fence: Fence, step: NewStep, now: number) {
  const id = stepIdentity(runId, step.key);
  const a = stepInsertArgs(id, fence, step, now, false);
  const values = [
    a.p_run_id,
    a.p_key_hash,
    a.p_step_key,
    a.p_name,
    a.p_kind,
    a.p_seq,
    a.p_status,
    1,
    a.p_max_attempts,
    a.p_queued,
    a.p_output,
    a.p_error,
    a.p_wake_at,
    a.p_child_run_id,
    now,
    now,
    a.p_turn,
    fence,
    a.p_worker,
    a.p_attempt_status,
    a.p_attempt_output,
    a.p_attempt_error,
    a.p_attempt_started_at,
  ];
  const inserted = await execute(ctx, statements(ctx).insert, [...values, id.runId, fence, fence]);
  if (inserted !== undefined) return { step: toStepRecord(inserted), created: true };
  const row = await readRunAndStep(ctx, id);
  checkWritable(runId, fence, row === undefined ? undefined : { fence: row.r_fence, status: row.r_status });
  if (row?.run_id == null) throw new CairnError('STORE_ERROR', `steps.insert: step ${step.key} of run ${runId} was not written and cannot be read`);
  return { step: toStepRecord(row as StepRow), created: false };
}

/** `steps.transition` on SQLite: ONE guarded compare-and-set; the trigger writes the attempts. */
async function transitionStepSqlite(ctx: StoreContext, runId: string, fence: Fence, tr: StepTransition, now: number): Promise<StepRecord> {
  const id = stepIdentity(runId, tr.key);
  const a = stepTransitionArgs(id, fence, tr, now);
  const updated = await execute(ctx, statements(ctx).transition, [
    a.p_to_status,
    a.p_to_attempt,
    a.p_set_output,
    a.p_output,
    a.p_set_error,
    a.p_error,
    a.p_wake,
    a.p_wake_at,
    a.p_child_run_id,
    a.p_turn,
    now,
    a.p_end_status,
    a.p_end_output,
    a.p_end_error,
    a.p_start_worker,
    id.runId,
    id.keyHash,
    tr.from.attempt,
    a.p_from_statuses,
    id.runId,
    fence,
    fence,
  ]);
  if (updated !== undefined) return toStepRecord(updated);
  const row = await readRunAndStep(ctx, id);
  checkWritable(runId, fence, row === undefined ? undefined : { fence: row.r_fence, status: row.r_status });
  throw stepConflict(runId, tr.key, row?.run_id == null ? undefined : toStepRecord(row as StepRow));
}

/** SQLite's step writes: one statement each; its triggers write the attempts. */
export const sqliteStepWrites: StepWrites = { insert: insertStepSqlite, transition: transitionStepSqlite };
