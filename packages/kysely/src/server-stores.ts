import type { WorkflowStore } from '@cairn/core/backend';
import type { ConnectionErrorHandler } from './connection-guards.js';
import { migrateToLatest } from './schema/migrations.js';
import { createKyselyStore, type KyselyStoreOptions } from './store.js';
import type { AnyKysely, SqlDialectName } from './dialect/types.js';

/** Options of `openPostgresStore` (`@cairn/kysely/postgres`) and `openMysqlStore` (`@cairn/kysely/mysql`). */
export interface ServerStoreOptions {
  /** Prefix of every table name (default `cairn_`). */
  tablePrefix?: string;
  /**
   * Run the migrations on open (default true). Opening then needs the server to be up; pass
   * `false` (and migrate at deploy time) to open a store while the database may be unreachable.
   */
  migrate?: boolean;
  /** PostgreSQL only: see `KyselyStoreOptions.asyncStartCommit` (default true). */
  asyncStartCommit?: boolean;
  /** PostgreSQL only: see `KyselyStoreOptions.preparedStatements` (default true in `openPostgresStore`). */
  preparedStatements?: boolean;
  /** PostgreSQL only: see `KyselyStoreOptions.groupCommit` (default true). */
  groupCommit?: boolean;
  /** PostgreSQL only: see `KyselyStoreOptions.groupCommitStatements` (default 8). */
  groupCommitStatements?: number;
  /** Largest JSON payload in bytes the store advertises (see `KyselyStoreOptions`). */
  maxPayloadBytes?: number;
  /**
   * Receives the connection errors the pool's guards caught (a restart, a dropped connection).
   * Default: ignored — the store operation that failed rejects with `STORE_ERROR` anyway, and the
   * engine logs an outage once.
   */
  onConnectionError?: ConnectionErrorHandler;
}

/** Migrates (unless told not to) and wraps a Kysely instance the store owns; destroys it on failure. */
export async function openOwned(
  db: AnyKysely,
  dialect: SqlDialectName,
  options: ServerStoreOptions,
  signals?: KyselyStoreOptions['signals'],
): Promise<WorkflowStore> {
  const tablePrefix = options.tablePrefix ?? 'cairn_';
  try {
    if (options.migrate ?? true) await migrateToLatest(db, { tablePrefix });
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw error;
  }
  return createKyselyStore({
    db,
    dialect,
    tablePrefix,
    ownsDb: true,
    ...(signals === undefined ? {} : { signals }),
    ...(options.asyncStartCommit === undefined ? {} : { asyncStartCommit: options.asyncStartCommit }),
    ...(options.preparedStatements === undefined ? {} : { preparedStatements: options.preparedStatements }),
    ...(options.groupCommit === undefined ? {} : { groupCommit: options.groupCommit }),
    ...(options.groupCommitStatements === undefined ? {} : { groupCommitStatements: options.groupCommitStatements }),
    ...(options.maxPayloadBytes === undefined ? {} : { maxPayloadBytes: options.maxPayloadBytes }),
  });
}
