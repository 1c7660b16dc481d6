import { CompiledQuery } from 'kysely';
import { CairnError, type Fence, type NewStep, type StepRecord, type StepTransition } from '@cairn/core';
import { toStepRecord } from './codec/rows.js';
import { retryRolledBack } from './dialect/retry-rolled-back.js';
import { CAIRN_MIGRATION_NAMES } from './schema/migrations.js';
import { checkWritable, type StoreContext } from './context.js';
import { STEP_INSERT_PARAMS, STEP_TRANSITION_PARAMS, orderedArgs, routineNames, type RoutineParam } from './routines/params.js';
import { postgresParamTypes } from './routines/postgres-routines.js';
import { stepInsertArgs, stepTransitionArgs } from './routines/routine-args.js';
import type { StepRow } from './schema/tables.js';
import { stepConflict, stepIdentity } from './steps-shared.js';

/** What both routines return: the run's fence and status, whether the write happened, the step. */
interface RoutineResult {
  run: { fence: unknown; status: unknown } | undefined;
  done: boolean;
  step: StepRow | undefined;
}

/**
 * Calls a step routine, one round trip: `select * from fn(...)` on PostgreSQL (the step comes back
 * as JSON), `call proc(...)` on MySQL/MariaDB (the step's columns come back flat, in the first
 * result set).
 */
async function callRoutine(ctx: StoreContext, name: string, params: readonly RoutineParam[], args: (string | number | null)[]): Promise<RoutineResult> {
  try {
    // The routine is one transaction: a deadlock victim was rolled back whole and is safe to rerun.
    return await retryRolledBack(ctx.dialect.isRolledBack, () => sendCall(ctx, name, params, args));
  } catch (error) {
    if (isMissingRoutine(error)) {
      throw new CairnError('STORE_ERROR', `The stored routine ${name} does not exist: run Cairn's migrations (migrateToLatest(db), or cairnMigrations() in your Migrator), which create it in ${CAIRN_MIGRATION_NAMES[1]}`, { cause: error });
    }
    throw error;
  }
}

/** PostgreSQL undefined_function, MySQL ER_SP_DOES_NOT_EXIST. */
function isMissingRoutine(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown } | null;
  return e?.code === '42883' || e?.errno === 1305;
}

// The text of each call is fixed per dialect and routine: built once, sent as a compiled query,
// so a step write spends nothing on building SQL (measured: a large share of a write's client time).
const callTexts = new Map<string, string>();

function callText(dialect: StoreContext['dialect']['name'], name: string, params: readonly RoutineParam[]): string {
  const cacheKey = `${dialect}:${name}`;
  let text = callTexts.get(cacheKey);
  if (text === undefined) {
    if (dialect === 'postgres') {
      const types = postgresParamTypes(params);
      text = `select * from "${name}"(${types.map((type, i) => `$${i + 1}::${type}`).join(', ')})`;
    } else {
      text = `call \`${name}\`(${params.map(() => '?').join(', ')})`;
    }
    callTexts.set(cacheKey, text);
  }
  return text;
}

async function sendCall(ctx: StoreContext, name: string, params: readonly RoutineParam[], args: (string | number | null)[]): Promise<RoutineResult> {
  const { rows: result } = await ctx.db.executeQuery<unknown>(CompiledQuery.raw(callText(ctx.dialect.name, name, params), args));
  if (ctx.dialect.name === 'postgres') {
    const row = result[0] as { r_fence: unknown; r_status: unknown; done: boolean; step: StepRow | null } | undefined;
    if (row === undefined) return { run: undefined, done: false, step: undefined };
    return { run: { fence: row.r_fence, status: row.r_status }, done: row.done === true, step: row.step ?? undefined };
  }
  // mysql2 returns a CALL's result sets followed by its status packet: the first set is ours.
  const set = (Array.isArray(result[0]) ? result[0] : result) as Array<Partial<StepRow> & { r_fence: unknown; r_status: unknown; done: unknown }>;
  const row = set[0];
  if (row === undefined || row.r_fence === null) return { run: undefined, done: false, step: undefined };
  return { run: { fence: row.r_fence, status: row.r_status }, done: Number(row.done) === 1, step: row.run_id == null ? undefined : (row as StepRow) };
}

/**
 * `steps.insert` through `<prefix>step_insert`: the run is locked and checked, the step inserted
 * unless its key exists, attempt 1 opened for a running step — one call, all or nothing. With
 * `asyncStartCommit` (PostgreSQL, default), a running step's start commits without waiting for the
 * WAL flush: a crash can only lose the knowledge that the attempt began, and the finish write,
 * which is durable, flushes it with itself.
 */
export async function insertStepRoutine(ctx: StoreContext, runId: string, fence: Fence, step: NewStep, now: number) {
  const id = stepIdentity(runId, step.key);
  const asyncCommit = ctx.dialect.name === 'postgres' && ctx.asyncStartCommit && step.status === 'running';
  const args = orderedArgs(STEP_INSERT_PARAMS, stepInsertArgs(id, fence, step, now, asyncCommit));
  const result = await callRoutine(ctx, routineNames(ctx.names.prefix).stepInsert, STEP_INSERT_PARAMS, args);
  checkWritable(runId, fence, result.run);
  // Both routines return the row as it stands after the call: the new step, or the existing one.
  if (result.step === undefined) throw new CairnError('STORE_ERROR', `steps.insert: step ${step.key} of run ${runId} was not returned by ${routineNames(ctx.names.prefix).stepInsert}`);
  return { step: toStepRecord(result.step), created: result.done };
}

/**
 * `steps.transition` through `<prefix>step_transition`: lock and check the run, compare-and-set
 * the step on status + attempt, close the previous attempt and open the next — one call.
 */
export async function transitionStepRoutine(ctx: StoreContext, runId: string, fence: Fence, tr: StepTransition, now: number): Promise<StepRecord> {
  const id = stepIdentity(runId, tr.key);
  const args = orderedArgs(STEP_TRANSITION_PARAMS, stepTransitionArgs(id, fence, tr, now));
  const result = await callRoutine(ctx, routineNames(ctx.names.prefix).stepTransition, STEP_TRANSITION_PARAMS, args);
  checkWritable(runId, fence, result.run);
  const step = result.step === undefined ? undefined : toStepRecord(result.step);
  if (!result.done || step === undefined) throw stepConflict(runId, tr.key, step);
  return step;
}
