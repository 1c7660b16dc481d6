import { CairnError } from '@cairn/core';
import { CAIRN_MIGRATION_NAMES } from './migrations.js';
import { TURN_COLUMN } from './step-turn-migration.js';

/**
 * Whether a driver error says `steps` has no `turn` column, i.e. the database predates
 * `cairn_0003_step_turn`: PostgreSQL undefined_column, MySQL/MariaDB ER_BAD_FIELD_ERROR, SQLite
 * "no such column" / "has no column named" (SQLite has no error code for it).
 */
export function isMissingTurnColumn(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : '';
  if (!new RegExp(`\\b${TURN_COLUMN}\\b`).test(message)) return false;
  return e?.code === '42703' || e?.errno === 1054 || message.includes(`no such column: ${TURN_COLUMN}`) || message.includes(`no column named ${TURN_COLUMN}`);
}

/** The `STORE_ERROR` of a store whose database lacks `cairn_0003_step_turn`: run the migrations. */
export function missingTurnColumn(cause: unknown): CairnError {
  return new CairnError(
    'STORE_ERROR',
    `The steps table lacks the column ${TURN_COLUMN} of ${CAIRN_MIGRATION_NAMES[2]}: run Cairn's migrations (migrateToLatest(db), or cairnMigrations() in your Migrator)`,
    { cause },
  );
}
