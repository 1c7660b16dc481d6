import type { Kysely } from 'kysely';
import type { AnySchema } from '../dialect/types.js';

// Kysely moved its migrator from `kysely` (0.27, 0.28) to `kysely/migration` (0.29). These are the
// shapes both share, so that the published types name neither path and a project on any supported
// Kysely type-checks against them (its own `Migrator` accepts them structurally).

/** One migration, as Kysely's `Migration`. */
export interface CairnMigration {
  /** Applies the migration. */
  up(db: Kysely<AnySchema>): Promise<void>;
  /** Reverts it. */
  down?(db: Kysely<AnySchema>): Promise<void>;
}

/** A set of migrations by name, as Kysely's `MigrationProvider`: pass it to your own `Migrator`. */
export interface CairnMigrationProvider {
  /** Every migration, keyed by its name; Kysely runs them in name order. */
  getMigrations(): Promise<Record<string, CairnMigration>>;
}

/** What one migration did, as Kysely's `MigrationResult`. */
export interface CairnMigrationResult {
  /** The migration's name. */
  readonly migrationName: string;
  /** `Up` when migrating to the latest. */
  readonly direction: 'Up' | 'Down';
  /** `Success`, `Error` (this one failed) or `NotExecuted` (an earlier one failed). */
  readonly status: 'Success' | 'Error' | 'NotExecuted';
}

/** The outcome of a migration run, as Kysely's `MigrationResultSet`. */
export interface CairnMigrationResultSet {
  /** Set when a migration failed; the later ones did not run. */
  readonly error?: unknown;
  /** The migrations that ran or were due, in order; absent when none could be determined. */
  readonly results?: CairnMigrationResult[];
}
