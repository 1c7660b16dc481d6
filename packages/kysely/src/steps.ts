import { sql } from 'kysely';
import type { Fence, NewStep, StepRecord, StepTransition } from '@cairn/core';
import { toStepRecord } from './codec/rows.js';
import { encodeText } from './codec/text.js';
import { guard, rows, type StoreContext } from './context.js';
import { missingStepColumn } from './schema/missing-step-column.js';
import { STEP_COLUMNS, type StepRow } from './schema/tables.js';

// The step's own columns only (SQLite's rows also carry the columns its triggers read).
const STEP_LIST = sql.raw(STEP_COLUMNS.join(', '));
import { insertStepRoutine, transitionStepRoutine } from './steps-routines.js';
import { insertStepSqlite, transitionStepSqlite } from './steps-sqlite.js';

/**
 * `steps.load`: one indexed read of every step of the run, ordered by seq. On a database without
 * `cairn_0003_step_turn` it fails with a `STORE_ERROR` that says to run the migrations.
 */
export function loadSteps(ctx: StoreContext) {
  return (runId: string) =>
    guard('steps.load', async (): Promise<StepRecord[]> => {
      try {
        const found = await rows(ctx.db, sql<StepRow>`select ${STEP_LIST} from ${ctx.t.steps} where run_id = ${encodeText(runId)} order by seq`);
        return found.map(toStepRecord);
      } catch (error) {
        const missing = missingStepColumn(error);
        if (missing !== undefined) throw missing;
        throw error;
      }
    });
}

/**
 * `steps.insert`. PostgreSQL and MySQL/MariaDB: one call of the `step_insert` routine (one round
 * trip). SQLite: one statement (a trigger writes the attempt).
 */
export function insertStep(ctx: StoreContext) {
  return (runId: string, fence: Fence, step: NewStep, now: number) =>
    guard('steps.insert', () =>
      ctx.dialect.name === 'sqlite' ? insertStepSqlite(ctx, runId, fence, step, now) : insertStepRoutine(ctx, runId, fence, step, now),
    );
}

/**
 * `steps.transition`. PostgreSQL and MySQL/MariaDB: one call of the `step_transition` routine (one
 * round trip). SQLite: one statement (a trigger writes the attempt).
 */
export function transitionStep(ctx: StoreContext) {
  return (runId: string, fence: Fence, t: StepTransition, now: number) =>
    guard('steps.transition', () =>
      ctx.dialect.name === 'sqlite' ? transitionStepSqlite(ctx, runId, fence, t, now) : transitionStepRoutine(ctx, runId, fence, t, now),
    );
}
