import type { AnyKysely } from '../dialect/types.js';
import type { CairnMigrationProvider, CairnMigrationResultSet } from './migration-types.js';

/** The part of Kysely's `Migrator` that `migrateToLatest` uses. */
export interface MigratorInstance {
  migrateToLatest(): Promise<CairnMigrationResultSet>;
}

/** Kysely's `Migrator` class, whichever module the installed Kysely keeps it in. */
export type MigratorClass = new (props: {
  db: AnyKysely;
  provider: CairnMigrationProvider;
  migrationTableName: string;
  migrationLockTableName: string;
}) => MigratorInstance;

let loaded: Promise<MigratorClass> | undefined;

/**
 * Loads `Migrator` from `kysely/migration` (Kysely 0.29 and later), else from `kysely` itself
 * (0.27, 0.28, which have no such subpath). Loaded once per process.
 */
export function loadMigrator(): Promise<MigratorClass> {
  loaded ??= import('kysely/migration').then(
    (module) => module.Migrator as unknown as MigratorClass,
    async (error: unknown) => {
      // Only a Kysely without the subpath falls back; anything else (a broken install) is reported.
      if ((error as { code?: unknown }).code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw error;
      const kysely = (await import('kysely')) as unknown as { Migrator: MigratorClass };
      return kysely.Migrator;
    },
  );
  return loaded;
}
