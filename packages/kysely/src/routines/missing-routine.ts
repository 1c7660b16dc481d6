import { CairnError } from '@cairn/core';
import { CAIRN_MIGRATION_NAMES } from '../schema/migration-names.js';

/**
 * The `STORE_ERROR` for a routine missing from the database, or older than the store (another
 * argument list): it says to run the migrations, naming the one that creates it (`createdBy`;
 * default: the step routines').
 */
export function missingRoutine(name: string, cause: unknown, createdBy?: string): CairnError {
  const where = createdBy ?? `${CAIRN_MIGRATION_NAMES[1]} (the step routines are replaced by ${CAIRN_MIGRATION_NAMES[2]})`;
  return new CairnError(
    'STORE_ERROR',
    `The stored routine ${name} does not exist or is older than this store: run Cairn's migrations (migrateToLatest(db), or cairnMigrations() in your Migrator), which create it in ${where}`,
    { cause },
  );
}
