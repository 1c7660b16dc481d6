import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogEvent } from 'kysely';
import { uniqueName } from '@cairn/conformance/services';
import type { SqlDialectName } from '../../src/index.js';
import { createDatabase, dropDatabase, mysqlDb, postgresDb, sqliteDb, type AnyDb } from './databases.js';
import { mysqlServer, postgresServer } from './servers.js';

/** Where one dialect's direct tests run: opens Kysely instances on one scratch database. */
export interface Target {
  dialect: SqlDialectName;
  /** Why the dialect cannot be tested here; undefined when it can. */
  skip?: string;
  /** Where the server came from (printed). */
  source: string;
  /** Creates the scratch database. */
  setup(): Promise<void>;
  /** A new Kysely instance (own connections) on the scratch database. */
  open(log?: (event: LogEvent) => void): Promise<AnyDb>;
  /** Drops the scratch database. */
  teardown(): Promise<void>;
}

/** A fresh table prefix. */
export const freshPrefix = (): string => `t${randomBytes(4).toString('hex')}_`;

/** The SQLite target: a database file in a temporary directory. */
export function sqliteTarget(): Target {
  let dir = '';
  return {
    dialect: 'sqlite',
    source: 'better-sqlite3 (in-process)',
    async setup() {
      dir = await mkdtemp(join(tmpdir(), 'cairn-kysely-test-'));
    },
    open: (log) => sqliteDb(join(dir, 'test.db'), log ? { log } : {}),
    async teardown() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A server target: a database of its own on the shared PostgreSQL or MySQL server. */
export async function serverTarget(dialect: 'postgres' | 'mysql'): Promise<Target> {
  const server = await (dialect === 'postgres' ? postgresServer() : mysqlServer());
  let dbUrl = '';
  if (server.skip !== undefined) {
    return { dialect, skip: server.skip, source: 'none', setup: async () => {}, open: () => Promise.reject(new Error(server.skip)), teardown: async () => {} };
  }
  return {
    dialect,
    source: server.source,
    async setup() {
      dbUrl = await createDatabase(dialect, server.url, uniqueName(`kysely_${dialect}`));
    },
    open: (log) => (dialect === 'postgres' ? postgresDb(dbUrl, log ? { log } : {}) : mysqlDb(dbUrl, log ? { log } : {})),
    async teardown() {
      if (dbUrl) await dropDatabase(dialect, dbUrl);
    },
  };
}
