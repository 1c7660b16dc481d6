import type { RoutineStatements } from '../dialect/types.js';
import { dropFinishedTriggerOnly, dropSqliteFinishedTrigger, dropSqliteTriggers, sqliteFinishedTrigger, sqliteTriggers } from './triggers.js';

/**
 * SQLite's triggers as migrations create and drop them; it has no step routines to replace (its
 * step statements live in the store), and no run routines.
 */
export const sqliteRoutineStatements: RoutineStatements = {
  install: async (_db, names) => sqliteTriggers(names),
  drop: (names) => [dropFinishedTriggerOnly(names), ...dropSqliteTriggers(names)],
  replaceStep: async () => [],
  // The store's step insert leaves the finished attempt to this trigger.
  installFinishedStep: async (_db, names) => sqliteFinishedTrigger(names),
  removeFinishedStep: async (_db, names) => dropSqliteFinishedTrigger(names),
  replaceRequestCancel: async () => {},
  // The claim is a statement of the store here (cairn_0015_run_pause changes no routine).
  replaceRunClaim: async () => {},
  // cairn_0012_step_insert_v2 is PostgreSQL's: SQLite's step statements are the store's.
  installStepInsertV2: async () => [],
  removeStepInsertV2: async () => [],
};
