import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { TableNames } from './tables.js';

/** The index `cairn_0014_runs_workflow_status` adds to `runs`. */
export const WORKFLOW_STATUS_INDEX = { name: 'runs_workflow_status_created', columns: ['workflow', 'status', 'created_at', 'id'] } as const;

/**
 * `cairn_0014_runs_workflow_status`: the index (workflow, status, created_at, id), for
 * `runs.list({ workflow, status })`. Without it that listing walks one of the two single-filter
 * indexes and filters on the other column: with a million runs, a status that is rare in the
 * workflow reads every run of the workflow. Down drops it.
 */
export function runWorkflowStatusMigration(names: TableNames): Migration {
  const index = `${names.prefix}${WORKFLOW_STATUS_INDEX.name}`;
  return {
    up: (db) => dialectOf(detectDialect(db)).schema.createIndexOnce(db, names.runs, index, WORKFLOW_STATUS_INDEX.columns),
    down: (db) => dialectOf(detectDialect(db)).schema.dropIndexOnce(db, names.runs, index),
  };
}
