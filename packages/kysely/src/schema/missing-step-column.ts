import { CairnError } from '@cairn/core';
import { CAIRN_MIGRATION_NAMES } from './migrations.js';
import { FENCE_COLUMN } from './step-finished-migration.js';
import { TURN_COLUMN } from './step-turn-migration.js';

/** The step columns later migrations added, and the migration that adds each. */
const ADDED_BY: ReadonlyArray<readonly [column: string, migration: string]> = [
  [TURN_COLUMN, CAIRN_MIGRATION_NAMES[2]],
  [FENCE_COLUMN, CAIRN_MIGRATION_NAMES[7]],
];

/**
 * Whether a driver error says `steps` lacks `column`: PostgreSQL undefined_column, MySQL/MariaDB
 * ER_BAD_FIELD_ERROR, SQLite "no such column" / "has no column named" (SQLite has no error code for it).
 */
function lacksColumn(error: unknown, column: string): boolean {
  const e = error as { code?: unknown; errno?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : '';
  if (!new RegExp(`\\b${column}\\b`).test(message)) return false;
  return e?.code === '42703' || e?.errno === 1054 || message.includes(`no such column: ${column}`) || message.includes(`no column named ${column}`);
}

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
