import type { RoutineStatements } from '../dialect/types.js';
import { dropFinishedTriggerOnly, dropSqliteTriggers, sqliteTriggers } from '../routines/sqlite-triggers.js';

/**
 * SQLite's triggers as migrations create and drop them; it has no step routines to replace (its
 * step statements live in the store).
 */
export const sqliteRoutineStatements: RoutineStatements = {
  install: async (_db, names) => sqliteTriggers(names),
  drop: (names) => [dropFinishedTriggerOnly(names), ...dropSqliteTriggers(names)],
  replaceStep: async () => [],
};
