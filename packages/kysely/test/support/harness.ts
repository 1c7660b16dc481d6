import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { WorkflowStore } from '@cairn/core/backend';
import type { ConformanceHarness } from '@cairn/conformance';
import { uniqueName } from '@cairn/conformance/services';
import { TABLES, createKyselyStore, detectDialect, openSqliteStore, tableNames, type SqlDialectName } from '../../src/index.js';
import { dropRoutines } from '../../src/routines/install-routines.js';
import { dialectOf } from '../../src/dialect/detect.js';
import { createPostgresSignals } from '../../src/postgres/postgres-signals.js';
import { encodeText } from '../../src/codec/text.js';
import { createDatabase, dropDatabase, mysqlDb, postgresDb, sqliteDb, type AnyDb } from './databases.js';
import { prefixPool, type PrefixPool } from './prefix-pool.js';

/** Opens a Kysely instance for one dialect on a database URL or SQLite file. */
export function openDb(dialect: SqlDialectName, target: string): Promise<AnyDb> {
  if (dialect === 'postgres') return postgresDb(target, { poolSize: 5 });
  if (dialect === 'mysql') return mysqlDb(target, { poolSize: 5 });
  return sqliteDb(target);
}

/** Every row of every store table that belongs to `runId`, described, for the deleteRun case. */
export async function artefactsIn(db: AnyDb, prefix: string, runId: string): Promise<string[]> {
  const names = tableNames(prefix);
  const id = encodeText(runId);
  const left: string[] = [];
  for (const table of TABLES) {
    if (table === 'versions' || table === 'schedules' || table === 'slots' || table === 'slot_waiters' || table === 'pauses' || table === 'bulk_operations')
      continue;
    const column = table === 'runs' ? 'id' : 'run_id';
    const { rows } = await sql<{ n: unknown }>`select count(*) as n from ${sql.table(names[table])} where ${sql.ref(column)} = ${id}`.execute(db);
    const n = Number(rows[0]?.n ?? 0);
    if (n > 0) left.push(`${n} row(s) in ${names[table]}`);
  }
  return left;
}

/** Every row of every store table of one prefix, as text (binary columns as UTF-8), for the payload-codec case. */
export async function rowsIn(db: AnyDb, prefix: string): Promise<string[]> {
  const names = tableNames(prefix);
  const out: string[] = [];
  const text = (_key: string, value: unknown) =>
    value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : typeof value === 'bigint' ? value.toString() : value;
  for (const table of TABLES) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(names[table])}`.execute(db);
    for (const row of rows) out.push(`${names[table]}: ${JSON.stringify(row, text)}`);
  }
  return out;
}

/** Drops every table of one prefix, including the migrator's own. */
export async function dropPrefix(db: AnyDb, prefix: string): Promise<void> {
  const names = tableNames(prefix);
  const dialect = detectDialect(db);
  // SQLite's triggers go with their table; the servers' routines are objects of their own.
  if (dialect !== 'sqlite') {
    await dropRoutines(db, names, dialect);
    for (const statement of dialectOf(dialect).dropSlotRoutines(names)) await sql.raw(statement).execute(db);
  }
  for (const table of [...TABLES.map((t) => names[t]), `${prefix}migrations`, `${prefix}migrations_lock`]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

/**
 * The conformance harness of one dialect. PostgreSQL and MySQL: one database per test file on the
 * shared server, and an empty table prefix per case (each store instance with its own connection
 * pool, so peers behave like separate processes): migrated for the first cases, then the emptied
 * prefix of a case that ended (`prefixPool`). SQLite: one database file per case, each store
 * instance with its own connection.
 */
export function sqlHarness(dialect: SqlDialectName, server?: { url: string; source: string }): ConformanceHarness {
  let dbUrl = '';
  let admin: AnyDb | undefined;
  let pool: PrefixPool | undefined;
  let dir = '';
  const files = new Map<string, string>();
  // One prefix per namespace; a peer opened on the same namespace waits for the same one.
  const prefixOf = (namespace: string): Promise<string> => {
    if (!pool) throw new Error('harness not set up');
    return pool.prefixOf(namespace);
  };

  return {
    name: `kysely-${dialect}`,
    source: () => (dialect === 'sqlite' ? `better-sqlite3 files in ${dir}` : (server?.source ?? '?')),
    async setup() {
      if (dialect === 'sqlite') {
        dir = await mkdtemp(join(tmpdir(), 'cairn-kysely-'));
        return;
      }
      if (!server) throw new Error(`no ${dialect} server`);
      dbUrl = await createDatabase(dialect, server.url, uniqueName('kysely_conf'));
      admin = await openDb(dialect, dbUrl);
      pool = prefixPool(admin);
    },
    async createStore(namespace): Promise<WorkflowStore> {
      if (dialect === 'sqlite') {
        const file = join(dir, `${namespace}.db`);
        files.set(namespace, file);
        return openSqliteStore(file);
      }
      const prefix = await prefixOf(namespace);
      const db = await openDb(dialect, dbUrl);
      // PostgreSQL stores signal wake-ups (LISTEN/NOTIFY) and send named statements, as
      // `openPostgresStore` makes them (the package tests cover the unnamed default of createKyselyStore).
      const postgres = dialect === 'postgres';
      const signals = postgres ? createPostgresSignals({ db, connection: dbUrl, tablePrefix: prefix }) : undefined;
      return createKyselyStore({ db, tablePrefix: prefix, ownsDb: true, preparedStatements: postgres, ...(signals ? { signals } : {}) });
    },
    // PostgreSQL's signals listen on a connection of their own: end it from the server's side.
    ...(dialect === 'postgres'
      ? {
          async dropSignalConnections(_store: WorkflowStore, namespace: string) {
            if (!admin) return 0;
            const prefix = await prefixOf(namespace);
            const { rows } = await sql<{ n: unknown }>`
              select count(pg_terminate_backend(pid)) as n from pg_stat_activity
              where datname = current_database() and pid <> pg_backend_pid()
                and query ilike 'listen %' and position(${prefix} in query) > 0`.execute(admin);
            return Number(rows[0]?.n ?? 0);
          },
        }
      : {}),
    async destroyStore(store, namespace) {
      await store.close();
      if (dialect === 'sqlite') {
        const file = files.get(namespace);
        if (file) for (const suffix of ['', '-wal', '-shm']) await rm(`${file}${suffix}`, { force: true });
        return;
      }
      await pool?.release(namespace);
    },
    async teardown() {
      if (dialect === 'sqlite') {
        await rm(dir, { recursive: true, force: true });
        return;
      }
      await admin?.destroy();
      if (dbUrl) await dropDatabase(dialect, dbUrl);
    },
    async artefactsOf(_store, namespace, runId) {
      if (dialect === 'sqlite') {
        const db = await sqliteDb(files.get(namespace) ?? '');
        try {
          return await artefactsIn(db, 'cairn_', runId);
        } finally {
          await db.destroy();
        }
      }
      if (!admin || !pool) throw new Error('harness not set up');
      return artefactsIn(admin, await pool.heldBy(namespace), runId);
    },
    async rawContents(_store, namespace) {
      if (dialect === 'sqlite') {
        const db = await sqliteDb(files.get(namespace) ?? '');
        try {
          return await rowsIn(db, 'cairn_');
        } finally {
          await db.destroy();
        }
      }
      if (!admin || !pool) throw new Error('harness not set up');
      return rowsIn(admin, await pool.heldBy(namespace));
    },
  };
}
