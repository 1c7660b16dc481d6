import type { WorkflowStore } from '@cairn/core/backend';
import { createKyselyStore } from '@cairn/kysely';
import { createPostgresSignals } from '@cairn/kysely/postgres';
import pg from 'pg';
import { RoundTripCounter } from '../instrument/round-trips.js';
import { xidCounter } from '../scenarios/pg-floor.js';
import { processTreeCpuMs } from '../servers/process-cpu.js';
import { openKyselyStore } from './kysely-common.js';
import { postgresDb } from './sql-drivers.js';
import type { BackendAdapter, BackendInstance, StoreSpec } from './types.js';

/** Opens an uncounted store, as a worker process does. */
export async function connectPostgresStore(spec: StoreSpec): Promise<{ store: WorkflowStore; close(): Promise<void> }> {
  const db = await postgresDb(spec.url);
  // LISTEN/NOTIFY wake-ups, as `openPostgresStore` adds them: workers on the local queue need them.
  const signals = createPostgresSignals({ db, connection: spec.url, tablePrefix: spec.namespace });
  const store = createKyselyStore({ db, tablePrefix: spec.namespace, signals });
  return {
    store,
    close: async () => {
      await store.close();
      await db.destroy();
    },
  };
}

/** PostgreSQL through `@cairn/kysely` + pg, on the bench's own durable server (fsync on). */
export const postgresBackend: BackendAdapter = {
  name: 'postgres',
  title: 'PostgreSQL',
  async setup(ctx): Promise<BackendInstance> {
    const server = await ctx.servers.postgres();
    const counter = new RoundTripCounter();
    // Reads the transaction-id horizon without taking a transaction id itself.
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    return {
      name: 'postgres',
      title: 'PostgreSQL',
      server: `${server.product} (${server.durability})`,
      driverCounted: true,
      counter,
      writeTransactions: () => xidCounter(admin),
      ...(server.pid === undefined ? {} : { serverCpuMs: () => processTreeCpuMs(server.pid!) }),
      openStore: () =>
        openKyselyStore({
          dialect: 'postgres',
          counter,
          counted: () => postgresDb(server.url, counter),
          uncounted: () => postgresDb(server.url),
          spec: (prefix) => ({ backend: 'postgres', url: server.url, namespace: prefix }),
          peerSignals: (db, tablePrefix) => createPostgresSignals({ db, connection: server.url, tablePrefix }),
        }),
      async close() {
        await admin.end();
      },
    };
  },
};
