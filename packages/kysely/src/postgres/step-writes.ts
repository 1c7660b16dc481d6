import type { StepWrites } from '../dialect/types.js';
import { routineStepWrites } from '../steps-routines.js';

/**
 * PostgreSQL's step writes: one call of the step function each; it returns the step as JSON in
 * `step`, and takes `asyncStartCommit`.
 */
export const postgresStepWrites: StepWrites = routineStepWrites({
  read: (row, run) => ({ run, done: row.done === true, step: row.step ?? undefined }),
  asyncStartCommit: true,
});
