import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { createKyselyStore, migrateToLatest } from '@cairn/kysely';
import { Redis } from 'ioredis';
import { Kysely, PostgresDialect, SqliteDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import type { AnyDb } from '../backends/sql-drivers.js';
import { processTreeCpuMs } from '../servers/process-cpu.js';
import { loadRedisRuns } from './redis-loader.js';
import { startScalePostgres, startScaleRedis, type ScaleServer } from './scale-servers.js';
import { makeTemplates, REDIS_STEPS_PER_RUN, scaleEngine, scaleTags, STEPS_PER_RUN } from './scale-workflows.js';
import { loadSqlRuns, postgresFlavour, sqliteFlavour, withoutSecondaryIndexes, type SqlFlavour, type Templates } from './sql-loader.js';

/** Which runs to copy from the templates: run numbers, and their creation times. */
export interface LoadRange {
  first: number;
  count: number;
  createdFrom: number;
  spacingMs: number;
}

/** One table (or Redis key family) and what it occupies. */
export interface SizeRow {
  table: string;
  rows: number;
  /** Table (heap) bytes; for Redis, the bytes of the keys. */
  dataBytes: number;
  indexBytes: number;
}

/** A store under measurement: the empty one or the loaded one, with its engine. */
export interface ScaleTarget {
  readonly label: 'empty' | 'loaded';
  readonly store: WorkflowStore;
  readonly engine: Engine;
  readonly templates: Templates;
  /** Copies template runs (see `loadSqlRuns` / `loadRedisRuns`). */
  load(range: LoadRange): Promise<void>;
  /** How many runs and steps the store holds (exact counts). */
  counts(): Promise<{ runs: number; steps: number }>;
  sizes(): Promise<SizeRow[]>;
  /** Read system calls this process has made so far (SQLite, which reads its file in this process: /proc/self/io `syscr`). */
  readCalls?(): number;
  /** Runs a big load with the secondary indexes dropped, built again after it (SQL only: `withoutSecondaryIndexes`). */
  withoutIndexes?(load: () => Promise<void>, log: (line: string) => void): Promise<void>;
  /** Runs `fn`, then the query plan of every statement it sent that `match` selects (SQL only). */
  plans?(fn: () => Promise<unknown>, match: (sql: string) => boolean): Promise<string[]>;
  close(): Promise<void>;
}

/** A backend of the scale bench: its server (if any) and its two stores. */
export interface ScaleBackend {
  readonly name: 'postgres' | 'sqlite' | 'redis' | 'mongodb';
  readonly title: string;
  readonly server: string;
  /** The loaded store, reused from `<dir>` when it holds the same number of runs; `fresh` says whether it was just made. */
  loaded(): Promise<{ target: ScaleTarget; fresh: boolean }>;
  /** CPU the server has used so far, in ms (10 ms ticks), where there is a server process. */
  serverCpuMs?(): number | undefined;
  /** A new small store (dropped and made again each time), holding `SMALL_RUNS` runs loaded as the big one's. */
  empty(): Promise<ScaleTarget>;
  close(): Promise<void>;
}

/** What a backend with a server process says about itself: its names, the server, the server's CPU. */
function serverBackend(name: 'postgres' | 'redis', title: string, server: ScaleServer): Pick<ScaleBackend, 'name' | 'title' | 'server' | 'serverCpuMs'> {
  return { name, title, server: server.describe, serverCpuMs: () => processTreeCpuMs(server.pid) };
}

interface Meta {
  templates: Templates;
  runs: number;
  /** Steps per loaded run (Redis: `--redis-steps`; absent in files written before it, meaning 1). */
  steps?: number;
}

function readMeta(file: string): Meta | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Meta) : undefined;
}

/** Statements the store sent while capturing (for EXPLAIN). */
class Capture {
  on = false;
  seen: CompiledQuery[] = [];
  log = (event: { level: string; query: CompiledQuery }) => {
    if (this.on && event.level === 'query') this.seen.push(event.query);
  };
}

async function startTemplates(store: WorkflowStore, steps = STEPS_PER_RUN, tags?: Record<string, string>): Promise<{ engine: Engine; templates: Templates }> {
  const engine = scaleEngine(store);
  await engine.start();
  const templates = await makeTemplates(engine, steps, tags);
  await engine.stop();
  return { engine: scaleEngine(store), templates };
}

async function sqlTarget(options: {
  label: 'empty' | 'loaded';
  db: AnyDb;
  capture: Capture;
  flavour: SqlFlavour;
  store: WorkflowStore;
  templates: Templates;
  sizes: () => Promise<SizeRow[]>;
  explain: (query: CompiledQuery) => Promise<string>;
  readCalls?: () => number;
}): Promise<ScaleTarget> {
  const { db, capture, store } = options;
  const engine = scaleEngine(store);
  await engine.start({ workers: false });
  return {
    label: options.label,
    store,
    engine,
    templates: options.templates,
    load: (range) => loadSqlRuns(db, options.flavour, 'cairn_', options.templates, range),
    withoutIndexes: (load, log) => withoutSecondaryIndexes(db, options.flavour, 'cairn_', load, log),
    ...(options.readCalls === undefined ? {} : { readCalls: options.readCalls }),
    async counts() {
      const runs = await sql<{ n: number | string }>`select count(*) as n from cairn_runs`.execute(db);
      const steps = await sql<{ n: number | string }>`select count(*) as n from cairn_steps`.execute(db);
      return { runs: Number(runs.rows[0]!.n), steps: Number(steps.rows[0]!.n) };
    },
    sizes: options.sizes,
    async plans(fn, match) {
      capture.seen = [];
      capture.on = true;
      try {
        await fn();
      } finally {
        capture.on = false;
      }
      const out: string[] = [];
      for (const query of capture.seen.filter((q) => match(q.sql))) out.push(`${query.sql}\n${await options.explain(query)}`);
      return out;
    },
    async close() {
      await engine.stop();
      await store.close();
      await db.destroy();
    },
  };
}

/** PostgreSQL: one kept server, database `scale_loaded` (kept) and `scale_empty` (made again each run). */
export async function postgresScale(dir: string, runs: number, loadBatch: number, log: (line: string) => void): Promise<ScaleBackend> {
  const server: ScaleServer = await startScalePostgres(dir);
  const metaFile = join(dir, 'postgres.json');
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  const urlOf = (database: string) => server.url.replace(/\/postgres$/, `/${database}`);
  const open = async (label: 'empty' | 'loaded', templates?: Templates) => {
    const capture = new Capture();
    const pool = new pg.Pool({ connectionString: urlOf(`scale_${label}`), max: 10 });
    pool.on('error', () => {});
    const db: AnyDb = new Kysely({ dialect: new PostgresDialect({ pool }), log: capture.log });
    const migrated = await timedMigration(db);
    if (migrated) log(`  ${label}: ${migrated}`);
    // Named statements, as `openPostgresStore` sends them by default.
    const store = createKyselyStore({ db, preparedStatements: true });
    // The SQL templates carry run 0's tags (every loaded run then gets its own, `scaleTags`).
    const made = templates ?? (await startTemplates(store, STEPS_PER_RUN, scaleTags(0))).templates;
    const sizes = async (): Promise<SizeRow[]> =>
      (
        await sql<{ table: string; rows: string; data: string; indexes: string }>`select c.relname as table, c.reltuples::bigint as rows,
          pg_table_size(c.oid) as data, pg_indexes_size(c.oid) as indexes from pg_class c
          where c.relkind = 'r' and c.relname like 'cairn\\_%' and c.relname not like 'cairn\\_migration%' order by c.relname`.execute(db)
      ).rows.map((r) => ({ table: r.table, rows: Math.max(0, Number(r.rows)), dataBytes: Number(r.data), indexBytes: Number(r.indexes) }));
    const explain = async (query: CompiledQuery) => {
      const res = await pool.query(`explain (analyze, buffers, costs off) ${query.sql}`, query.parameters as unknown[]);
      return res.rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
    };
    return sqlTarget({ label, db, capture, flavour: postgresFlavour, store, templates: made, sizes, explain });
  };
  return {
    ...serverBackend('postgres', 'PostgreSQL', server),
    async loaded() {
      const meta = readMeta(metaFile);
      if (meta?.runs === runs) return { target: await open('loaded', meta.templates), fresh: false };
      await admin.query('drop database if exists scale_loaded');
      await admin.query('create database scale_loaded');
      const target = await open('loaded');
      await target.withoutIndexes!(() => loadInBatches(target, runs, loadBatch, log), log);
      const db = new pg.Client({ connectionString: urlOf('scale_loaded') });
      await db.connect();
      // What autovacuum would do soon after a load this size: statistics for the planner, a visibility map.
      await db.query('vacuum (analyze)');
      await db.end();
      writeFileSync(metaFile, JSON.stringify({ templates: target.templates, runs } satisfies Meta));
      return { target, fresh: true };
    },
    async empty() {
      await admin.query('drop database if exists scale_empty');
      await admin.query('create database scale_empty');
      return seeded(await open('empty'));
    },
    async close() {
      await admin.end();
      await server.stop();
    },
  };
}

/** SQLite: `<dir>/loaded.sqlite` (kept) and `<dir>/empty.sqlite` (made again each run), set up as `openSqliteStore` does. */
export async function sqliteScale(dir: string, runs: number, loadBatch: number, log: (line: string) => void): Promise<ScaleBackend> {
  const { default: Database } = await import('better-sqlite3');
  const metaFile = join(dir, 'sqlite.json');
  const open = async (label: 'empty' | 'loaded', templates?: Templates) => {
    const database = new Database(join(dir, `${label}.sqlite`));
    database.pragma('journal_mode = WAL');
    database.pragma('busy_timeout = 5000');
    database.pragma('synchronous = NORMAL');
    const capture = new Capture();
    const db: AnyDb = new Kysely({ dialect: new SqliteDialect({ database }), log: capture.log });
    const migrated = await timedMigration(db);
    if (migrated) log(`  ${label}: ${migrated}`);
    const store = createKyselyStore({ db, dialect: 'sqlite' });
    const made = templates ?? (await startTemplates(store, STEPS_PER_RUN, scaleTags(0))).templates;
    const sizes = async (): Promise<SizeRow[]> => {
      const objects = database.prepare(`select name, tbl_name, type from sqlite_master where tbl_name like 'cairn\\_%' escape '\\'`).all() as Array<{
        name: string;
        tbl_name: string;
        type: string;
      }>;
      const bytes = new Map(
        (database.prepare('select name, sum(pgsize) as bytes from dbstat group by name').all() as Array<{ name: string; bytes: number }>).map((r) => [
          r.name,
          r.bytes,
        ]),
      );
      const out = new Map<string, SizeRow>();
      for (const object of objects) {
        if (object.tbl_name.startsWith('cairn_migration')) continue;
        const row = out.get(object.tbl_name) ?? { table: object.tbl_name, rows: 0, dataBytes: 0, indexBytes: 0 };
        const size = bytes.get(object.name) ?? 0;
        if (object.type === 'table') {
          row.dataBytes += size;
          row.rows = (database.prepare(`select count(*) as n from "${object.name}"`).get() as { n: number }).n;
        } else row.indexBytes += size;
        out.set(object.tbl_name, row);
      }
      return [...out.values()].sort((a, b) => a.table.localeCompare(b.table));
    };
    const explain = async (query: CompiledQuery) =>
      (database.prepare(`explain query plan ${query.sql}`).all(...(query.parameters as unknown[])) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join('\n');
    return sqlTarget({ label, db, capture, flavour: sqliteFlavour, store, templates: made, sizes, explain, readCalls: processReadCalls });
  };
  const remove = (label: string) => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, `${label}.sqlite${suffix}`), { force: true });
  };
  return {
    name: 'sqlite',
    title: 'SQLite',
    server: `SQLite via better-sqlite3 (journal_mode=WAL, synchronous=NORMAL), files in ${dir}`,
    async loaded() {
      const meta = readMeta(metaFile);
      if (meta?.runs === runs && existsSync(join(dir, 'loaded.sqlite'))) return { target: await open('loaded', meta.templates), fresh: false };
      remove('loaded');
      const target = await open('loaded');
      await target.withoutIndexes!(() => loadInBatches(target, runs, loadBatch, log), log);
      // No ANALYZE: nothing runs it on a user's SQLite file, so the planner works without statistics here too.
      writeFileSync(metaFile, JSON.stringify({ templates: target.templates, runs } satisfies Meta));
      return { target, fresh: true };
    },
    async empty() {
      remove('empty');
      return seeded(await open('empty'));
    },
    async close() {},
  };
}

/** Redis: one kept server, the loaded store in database 0 (saved to its RDB file after the load), the empty one in database 1 (flushed each run). */
export async function redisScale(
  dir: string,
  runs: number,
  loadBatch: number,
  log: (line: string) => void,
  steps = REDIS_STEPS_PER_RUN,
): Promise<ScaleBackend> {
  const { createRedisStore } = await import('@cairn/redis');
  const server = await startScaleRedis(dir);
  const metaFile = join(dir, 'redis.json');
  const clients: Redis[] = [];
  const open = async (label: 'empty' | 'loaded', templates?: Templates): Promise<ScaleTarget> => {
    const client = new Redis(server.url, { db: label === 'loaded' ? 0 : 1, maxRetriesPerRequest: 3 });
    clients.push(client);
    const store = createRedisStore({ redis: client, prefix: 'cairn' });
    const made = templates ?? (await startTemplates(store, steps)).templates;
    const engine = scaleEngine(store);
    await engine.start({ workers: false });
    const countKeys = async (match: string) => {
      let cursor = '0';
      let n = 0;
      do {
        const [next, found] = await client.scan(cursor, 'MATCH', match, 'COUNT', 10_000);
        cursor = next;
        n += found.length;
      } while (cursor !== '0');
      return n;
    };
    return {
      label,
      store,
      engine,
      templates: made,
      load: (range) => loadRedisRuns(client, 'cairn', made, range, 500),
      async counts() {
        return { runs: await client.zcard('{cairn}:runs'), steps: await countKeys('cairn:run:{*}:step:*') };
      },
      async sizes() {
        // Memory of one loaded run's own keys (MEMORY USAGE), by family; the global indexes from their sizes.
        const sample = (await client.zrange('{cairn}:status:completed', '-1', '-1'))[0];
        if (sample === undefined) return [];
        const keys = await client.smembers(`cairn:run:{${sample}}:keys`);
        const family = (key: string) => (/:step:/.test(key) ? 'step hashes' : /:att:/.test(key) ? 'attempt hashes' : 'run keys');
        const rows = new Map<string, SizeRow>();
        for (const key of [`cairn:run:{${sample}}`, `cairn:run:{${sample}}:keys`, ...keys]) {
          const bytes = Number((await client.memory('USAGE', key, 'SAMPLES', 0)) ?? 0);
          if (bytes === 0) continue;
          const row = rows.get(family(key)) ?? { table: `${family(key)} (one run)`, rows: 0, dataBytes: 0, indexBytes: 0 };
          row.rows += 1;
          row.dataBytes += bytes;
          rows.set(family(key), row);
        }
        const info = await client.info('memory');
        const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
        const indexes = ['{cairn}:runs', '{cairn}:ix', '{cairn}:status:completed', '{cairn}:wf:scale-w0', '{cairn}:wfs:completed:scale-w0'];
        const out = [...rows.values()];
        for (const key of indexes) {
          const bytes = Number((await client.memory('USAGE', key, 'SAMPLES', 0)) ?? 0);
          const type = await client.type(key);
          const n = type === 'zset' ? await client.zcard(key) : type === 'hash' ? await client.hlen(key) : 0;
          out.push({ table: key, rows: n, dataBytes: 0, indexBytes: bytes });
        }
        out.push({ table: `used_memory (the whole server, both databases)`, rows: await client.dbsize(), dataBytes: used, indexBytes: 0 });
        return out;
      },
      async close() {
        await engine.stop();
        await store.close();
      },
    };
  };
  return {
    ...serverBackend('redis', 'Redis', server),
    async loaded() {
      const meta = readMeta(metaFile);
      const admin = new Redis(server.url, { db: 0 });
      try {
        if (meta?.runs === runs && (meta.steps ?? 1) === steps && (await admin.zcard('{cairn}:runs')) >= runs)
          return { target: await open('loaded', meta.templates), fresh: false };
        await admin.flushdb();
        const target = await open('loaded');
        await loadInBatches(target, runs, loadBatch, log);
        await admin.save();
        writeFileSync(metaFile, JSON.stringify({ templates: target.templates, runs, steps } satisfies Meta));
        return { target, fresh: true };
      } finally {
        admin.disconnect();
      }
    },
    async empty() {
      const admin = new Redis(server.url, { db: 1 });
      await admin.flushdb();
      admin.disconnect();
      return seeded(await open('empty'));
    },
    async close() {
      for (const client of clients) client.disconnect();
      await server.stop();
    },
  };
}

/** Brings the tables up to date; says which migrations ran and how long they took (a new index on a loaded store), or nothing. */
async function timedMigration(db: AnyDb): Promise<string | undefined> {
  const t0 = Date.now();
  const result = await migrateToLatest(db);
  const ran = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  return ran.length === 0 ? undefined : `migrated (${ran.join(', ')}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
}

/** This process's read system calls so far (`syscr` in /proc/self/io; 0 where there is no /proc). */
function processReadCalls(): number {
  try {
    return Number(/syscr: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The loaded runs are created over the 30 days before the load, oldest first. */
export const LOAD_SPAN_MS = 30 * 24 * 3600_000;

/**
 * Runs in the small store the big one is compared with: enough that every listing measured fills
 * its page as on the big store (an empty store would list nothing, and reading no row is not "the
 * same" listing), few enough that every index fits in a page or two.
 */
export const SMALL_RUNS = 2000;

async function seeded(target: ScaleTarget): Promise<ScaleTarget> {
  await loadInBatches(target, SMALL_RUNS, SMALL_RUNS, () => {});
  return target;
}

/** Loads `runs` runs into `target` in loads of `batch`, created over the `LOAD_SPAN_MS` before now, oldest first; logs the rate. */
export async function loadInBatches(target: ScaleTarget, runs: number, batch: number, log: (line: string) => void): Promise<void> {
  const spacingMs = Math.max(1, Math.floor(LOAD_SPAN_MS / runs));
  const createdFrom = Date.now() - LOAD_SPAN_MS;
  const started = Date.now();
  for (let first = 0; first < runs; first += batch) {
    const count = Math.min(batch, runs - first);
    await target.load({ first, count, createdFrom: createdFrom + first * spacingMs, spacingMs });
    const done = first + count;
    const seconds = (Date.now() - started) / 1000;
    log(`  loaded ${done.toLocaleString('en-US')} / ${runs.toLocaleString('en-US')} runs (${Math.round(done / seconds).toLocaleString('en-US')} runs/s)`);
  }
}
