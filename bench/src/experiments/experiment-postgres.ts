import pg from 'pg';
import type { WorkflowStore } from '@cairn/core/backend';
import { createKyselyStore, migrateToLatest } from '@cairn/kysely';
import { postgresDb, type AnyDb } from '../backends/sql-drivers.js';
import { startDurablePostgres, type DurablePostgres } from '../servers/durable-postgres.js';

/** What an experiment on PostgreSQL works with. */
export interface PostgresExperiment {
  /** The bench's durable server (fsync on), started for this experiment. */
  server: DurablePostgres;
  /** A store on it, migrated to the latest schema (prefix `cairn_`). */
  store: WorkflowStore;
  /** The Kysely instance the store runs on (a pool), for more prefixes or migrations. */
  db: AnyDb;
  /** A plain `pg` client of its own, connected. */
  client: pg.Client;
}

/**
 * Runs `experiment` on a fresh durable PostgreSQL server with a migrated store and a plain `pg`
 * client beside it, and closes all three whatever the experiment does.
 */
export async function withPostgresExperiment(experiment: (on: PostgresExperiment) => Promise<void>): Promise<void> {
  const server = await startDurablePostgres((line) => process.stderr.write(`${line}\n`));
  try {
    const db = await postgresDb(server.url);
    const client = new pg.Client({ connectionString: server.url });
    try {
      await migrateToLatest(db);
      await client.connect();
      await experiment({ server, db, store: createKyselyStore({ db }), client });
    } finally {
      await client.end().catch(() => undefined);
      await db.destroy();
    }
  } finally {
    await server.stop();
  }
}
