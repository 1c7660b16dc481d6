import { Kysely, SqliteDialect } from 'kysely';
import type { WorkflowStore } from '@cairn/core/backend';
import type { AnySchema } from '../dialect/types.js';
import { migrateToLatest } from '../schema/migrations.js';
import { createKyselyStore } from '../store.js';

/** Options of `openSqliteStore`. */
export interface SqliteStoreOptions {
  /** Prefix of every table name (default `cairn_`). */
  tablePrefix?: string;
  /** Run the migrations on open (default true: this convenience owns its database). */
  migrate?: boolean;
  /** How long a writer waits for another process's write lock, in ms (default 5000). */
  busyTimeoutMs?: number;
}

/**
 * Opens (creating if needed) a SQLite database file with better-sqlite3 and returns a store that
 * owns it: WAL journal, `busy_timeout`, `synchronous = NORMAL`, tables migrated to the latest
 * schema. `close()` closes the database. For development, tests and single-machine deployments;
 * SQLite has one writer at a time. `filename` may be `:memory:`.
 */
export async function openSqliteStore(filename: string, options: SqliteStoreOptions = {}): Promise<WorkflowStore> {
  const { default: Database } = await import('better-sqlite3');
  const database = new Database(filename);
  try {
    database.pragma('journal_mode = WAL');
    database.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    database.pragma('synchronous = NORMAL');
  } catch (error) {
    database.close();
    throw error;
  }
  const db = new Kysely<AnySchema>({ dialect: new SqliteDialect({ database }) });
  const tablePrefix = options.tablePrefix ?? 'cairn_';
  try {
    if (options.migrate ?? true) await migrateToLatest(db, { tablePrefix });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return createKyselyStore({ db, dialect: 'sqlite', tablePrefix, ownsDb: true });
}
