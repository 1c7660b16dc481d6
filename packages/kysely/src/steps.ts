import { sql } from 'kysely';
import type { StepRecord } from '@cairn/core';
import type { Fence, NewStep, StepTransition } from '@cairn/core/backend';
import { toStepRecord } from './codec/rows.js';
import { encodeText } from './codec/text.js';
import { guard, rows, type StoreContext } from './context.js';
import { missingStepColumn } from './schema/missing-step-column.js';
import { STEP_COLUMNS, type StepRow } from './schema/tables.js';

// The step's own columns only (SQLite's rows also carry the columns its triggers read).
const STEP_LIST = sql.raw(STEP_COLUMNS.join(', '));

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
 * `steps.insert`: the dialect's one round trip (PostgreSQL and MySQL/MariaDB: one call of the
 * `step_insert` routine; SQLite: one statement, a trigger writes the attempt).
 */
export function insertStep(ctx: StoreContext) {
  return (runId: string, fence: Fence, step: NewStep, now: number) => guard('steps.insert', () => ctx.dialect.steps.insert(ctx, runId, fence, step, now));
}

/**
 * `steps.transition`: the dialect's one round trip (PostgreSQL and MySQL/MariaDB: one call of the
 * `step_transition` routine; SQLite: one statement, a trigger writes the attempt).
 */
export function transitionStep(ctx: StoreContext) {
  return (runId: string, fence: Fence, t: StepTransition, now: number) =>
    guard('steps.transition', () => ctx.dialect.steps.transition(ctx, runId, fence, t, now));
}
