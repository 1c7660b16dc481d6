import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import { runStatements } from './run-statements.js';
import type { TableNames } from './tables.js';

/**
 * `cairn_0018_step_insert_batch`: on PostgreSQL, the function `<prefix>step_insert_batch`, which a
 * group commit statement of several step inserts calls from this version on: the writes of N
 * `step_insert_v2` calls as one set-based call, each write with the same checks, rows and answer.
 * A store of an earlier version never calls it; a store of this version on a database without it
 * sends its batches as before (N calls in one statement). Other dialects: nothing. Down drops the
 * function.
 */
export function stepInsertBatchMigration(names: TableNames): Migration {
  return {
    up: async (db) => runStatements(db, await dialectOf(detectDialect(db)).routines.installStepInsertBatch(db, names)),
    down: async (db) => runStatements(db, await dialectOf(detectDialect(db)).routines.removeStepInsertBatch(db, names)),
  };
}
