import type { StepWrites } from '../dialect/types.js';
import type { StepRow } from '../schema/tables.js';
import { routineStepWrites } from '../steps-routines.js';

/**
 * MySQL/MariaDB's step writes: one call of the step procedure each; it returns the step's columns
 * flat next to `r_fence`, `r_status` and `done` (no step: `run_id` is NULL). Every commit is durable.
 */
export const mysqlStepWrites: StepWrites = routineStepWrites({
  read: (row, run) => ({ run, done: Number(row.done) === 1, step: row.run_id == null ? undefined : (row as StepRow) }),
  asyncStartCommit: false,
});
