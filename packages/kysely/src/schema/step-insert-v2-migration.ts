import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import { runStatements } from './run-statements.js';
import type { TableNames } from './tables.js';

/**
 * `cairn_0012_step_insert_v2`: on PostgreSQL, the function `<prefix>step_insert_v2`, which
 * `steps.insert` calls from this version on: the same arguments and writes as `<prefix>step_insert`
 * of `cairn_0008_step_finished`, returning one JSON value that is NULL when the step was written
 * (the store builds the record from what it sent) instead of a row with the step as JSON. The
 * older function stays, so a store of an earlier version keeps working on a migrated database.
 * Other dialects: nothing. Down drops the function.
 */
export function stepInsertV2Migration(names: TableNames): Migration {
  return {
    up: async (db) => runStatements(db, await dialectOf(detectDialect(db)).routines.installStepInsertV2(db, names)),
    down: async (db) => runStatements(db, await dialectOf(detectDialect(db)).routines.removeStepInsertV2(db, names)),
  };
}
