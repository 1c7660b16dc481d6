import { CairnError } from '@cairn/core';
import { lacksColumn } from './lacks-column.js';
import { CAIRN_MIGRATION_NAMES } from './migration-names.js';
import { FENCE_COLUMN, TURN_COLUMN } from './added-columns.js';

/** The step columns later migrations added, and the migration that adds each. */
const ADDED_BY: ReadonlyArray<readonly [column: string, migration: string]> = [
  [TURN_COLUMN, CAIRN_MIGRATION_NAMES[2]],
  [FENCE_COLUMN, CAIRN_MIGRATION_NAMES[7]],
];

/**
 * The `STORE_ERROR` of a store whose database lacks a step column a later migration added (`turn`:
 * `cairn_0003_step_turn`; `fence`: `cairn_0008_step_finished`), saying to run the migrations; or
 * `undefined` when `error` is not about such a column.
 */
export function missingStepColumn(error: unknown): CairnError | undefined {
  const found = ADDED_BY.find(([column]) => lacksColumn(error, column));
  if (found === undefined) return undefined;
  const [column, migration] = found;
  return new CairnError(
    'STORE_ERROR',
    `The steps table lacks the column ${column} of ${migration}: run Cairn's migrations (migrateToLatest(db), or cairnMigrations() in your Migrator)`,
    { cause: error },
  );
}
