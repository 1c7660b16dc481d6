import { join } from 'node:path';
import { RoundTripCounter } from '../instrument/round-trips.js';
import { openKyselyStore } from './kysely-common.js';
import { sqliteDb } from './sql-drivers.js';
import type { BackendAdapter, BackendInstance } from './types.js';

let files = 0;

/**
 * SQLite through `@cairn/kysely` + better-sqlite3, a file in a temporary directory, set up like
 * `openSqliteStore` (WAL, synchronous = NORMAL). Its "round trips" are statement executions.
 */
export const sqliteBackend: BackendAdapter = {
  name: 'sqlite',
  title: 'SQLite',
  async setup(ctx): Promise<BackendInstance> {
    const { default: Database } = await import('better-sqlite3');
    const probe = new Database(':memory:');
    const version = (probe.prepare('select sqlite_version() as v').get() as { v: string }).v;
    probe.close();
    const counter = new RoundTripCounter();
    return {
      name: 'sqlite',
      title: 'SQLite',
      server: `SQLite ${version} via better-sqlite3, file in ${ctx.tmpDir} (journal_mode=WAL, synchronous=NORMAL)`,
      driverCounted: true,
      counter,
      openStore() {
        const file = join(ctx.tmpDir, `bench-${++files}.sqlite`);
        return openKyselyStore({ dialect: 'sqlite', counter, counted: () => sqliteDb(file, counter), uncounted: () => sqliteDb(file) });
      },
      async close() {},
    };
  },
};
