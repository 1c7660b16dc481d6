import { hash } from 'node:crypto';
import { sql } from 'kysely';
import type { AnyDb } from '../backends/sql-drivers.js';
import { CUSTOMERS, STATUS_MIX, WORKFLOW_COUNT } from './scale-workflows.js';

/** What differs between the SQL dialects the loader runs on. */
export interface SqlFlavour {
  /** A `select` yielding one integer column `n` from `from` to `to` inclusive. */
  series(from: number, to: number): string;
  /** A UUIDv7 text (as the engine makes run ids) whose time is the epoch-ms expression `ms`. */
  uuidV7(ms: string): string;
  /** The columns of a table, in table order. */
  columns(db: AnyDb, table: string): Promise<string[]>;
  /**
   * Tables the dialect's own triggers fill when `steps` rows are inserted (SQLite: `attempts`, from
   * the step's `end_*` and `start_*` columns, as the engine's writes do): copied through the
   * trigger, not a second time.
   */
  filledByTriggers: readonly string[];
  /** Statements run first in each load transaction (settings that last only for it). */
  loadSettings: readonly string[];
  /**
   * The secondary indexes of the store's tables (not those behind a primary key), each with the
   * statement that makes it again exactly as the migrations made it: dropped before a big load and
   * built afterwards (one sorted build is many times faster than a million ordered inserts into each).
   */
  secondaryIndexes(db: AnyDb, prefix: string): Promise<Array<{ name: string; create: string }>>;
}

/**
 * Runs `load` with the store's secondary indexes dropped, then builds each again from its own
 * definition: the same indexes on the same rows, packed as after a `REINDEX` rather than grown
 * row by row (docs/benchmarks.md says so beside the sizes).
 */
export async function withoutSecondaryIndexes(
  db: AnyDb,
  flavour: SqlFlavour,
  prefix: string,
  load: () => Promise<void>,
  log: (line: string) => void,
): Promise<void> {
  const indexes = await flavour.secondaryIndexes(db, prefix);
  for (const { name } of indexes) await sql.raw(`drop index "${name}"`).execute(db);
  await load();
  for (const { name, create } of indexes) {
    const t0 = Date.now();
    await sql.raw(create).execute(db);
    log(`  built ${name} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
}

/** The template runs (one real run per status, made by the engine) that every loaded run copies. */
export type Templates = Record<'completed' | 'failed' | 'cancelled', string>;

/** The tables a run's rows live in, the run itself first (`run_tags` is written from the tags, below). */
const RUN_TABLES = ['runs', 'steps', 'attempts', 'state', 'events'] as const;

/** `scaleTags(n)` as SQL over the series column `n` (integer division and `%` agree in both dialects). */
const CUSTOMER_SQL = `'c-' || ((n * 7919) % ${CUSTOMERS})`;
const PLAN_SQL = `case when (n / 3) % 10 < 6 then 'free' when (n / 3) % 10 < 9 then 'pro' else 'enterprise' end`;

/**
 * Every tag a loaded run can carry with its `run_tags.tag_hash`, computed here as the store does
 * (`tagHash`: the SHA-256 hex of `JSON.stringify([key, value])`); `verifyLoaded` finds loaded runs
 * by their tags through `listRuns`, which would fail if the two ever differed.
 */
function tagHashRows(): string[] {
  const rows: string[] = [];
  const add = (key: string, value: string) => rows.push(`('${key}', '${value}', '${hash('sha256', JSON.stringify([key, value]), 'hex')}')`);
  for (let c = 0; c < CUSTOMERS; c++) add('customer', `c-${c}`);
  for (const plan of ['free', 'pro', 'enterprise']) add('plan', plan);
  return rows;
}
const TAG_HASH_ROWS = tagHashRows();

/**
 * Loads runs by copying the template runs' rows on the server, in one transaction per call: for
 * run `n` (from `first` to `first + count - 1`) it takes the template of the status `STATUS_MIX`
 * gives `n`, and copies that run's rows in every table with a fresh UUIDv7 id (of the run's new
 * creation time, as the engine makes them), workflow `scale-w<(n + n div 100) mod 10>` (every status in every workflow), every `*_at` time moved
 * by the same amount (created at `createdFrom + (n - first) * spacingMs`), and the template's id
 * replaced by the new one inside every `*_json` column (a cancelled run's error names its run).
 * Every other column is the engine's own value, byte for byte.
 */
export async function loadSqlRuns(
  db: AnyDb,
  flavour: SqlFlavour,
  prefix: string,
  templates: Templates,
  range: { first: number; count: number; createdFrom: number; spacingMs: number },
): Promise<void> {
  const { first, count, createdFrom, spacingMs } = range;
  const last = first + count - 1;
  // n mod 100 picks the status: the first `per100` values the first status, and so on.
  let bound = 0;
  const cases = STATUS_MIX.map(({ status, per100 }) => {
    bound += per100;
    return `when n % 100 < ${bound} then '${templates[status]}'`;
  }).join(' ');
  const columnsOf = new Map<string, string[]>();
  for (const table of RUN_TABLES) columnsOf.set(table, await flavour.columns(db, `${prefix}${table}`));
  await db.transaction().execute(async (trx) => {
    for (const setting of flavour.loadSettings) await sql.raw(setting).execute(trx);
    await sql.raw(`drop table if exists scale_ids`).execute(trx);
    await sql
      .raw(
        `create temp table scale_ids as
         select n, tpl, created, customer, plan, ${flavour.uuidV7('created')} as id
         from (select n, case ${cases} end as tpl, ${createdFrom} + (n - ${first}) * ${spacingMs} as created,
                 ${CUSTOMER_SQL} as customer, ${PLAN_SQL} as plan
               from (${flavour.series(first, last)}) g) s`,
      )
      .execute(trx);
    await sql.raw(`drop table if exists scale_tag_hashes`).execute(trx);
    await sql.raw(`create temp table scale_tag_hashes (tag_key text, tag_value text, tag_hash text, primary key (tag_key, tag_value))`).execute(trx);
    for (let i = 0; i < TAG_HASH_ROWS.length; i += 2000)
      await sql.raw(`insert into scale_tag_hashes values ${TAG_HASH_ROWS.slice(i, i + 2000).join(', ')}`).execute(trx);
    for (const table of RUN_TABLES) {
      if (flavour.filledByTriggers.includes(table)) continue;
      const runKey = table === 'runs' ? 'id' : 'run_id';
      const columns = columnsOf.get(table)!;
      const values = columns.map((column) => {
        if (column === runKey) return 'i.id';
        if (table === 'runs' && column === 'workflow') return `'scale-w' || ((i.n + i.n / 100) % ${WORKFLOW_COUNT})`;
        // The tags as the engine stores a start's tags (`JSON.stringify` of { customer, plan }; checked against the template's).
        if (table === 'runs' && column === 'tags_json') return `'{"customer":"' || i.customer || '","plan":"' || i.plan || '"}'`;
        if (column.endsWith('_at')) return `r.${column} + (i.created - t.created_at)`;
        if (column.endsWith('_json')) return `replace(r.${column}, i.tpl, i.id)`;
        return `r.${column}`;
      });
      await sql
        .raw(
          `insert into ${prefix}${table} (${columns.join(', ')})
           select ${values.join(', ')}
           from scale_ids i join ${prefix}runs t on t.id = i.tpl join ${prefix}${table} r on r.${runKey} = i.tpl
           order by i.n`,
        )
        .execute(trx);
    }
    // One run_tags row per tag, as `runs.create` writes them with the run.
    for (const key of ['customer', 'plan'])
      await sql
        .raw(
          `insert into ${prefix}run_tags (run_id, tag_hash, tag_key, tag_value, run_created_at)
           select i.id, h.tag_hash, h.tag_key, h.tag_value, i.created
           from scale_ids i join scale_tag_hashes h on h.tag_key = '${key}' and h.tag_value = i.${key}
           order by i.n`,
        )
        .execute(trx);
    await sql.raw(`drop table scale_ids`).execute(trx);
    await sql.raw(`drop table scale_tag_hashes`).execute(trx);
  });
}

/** PostgreSQL: `generate_series`, `information_schema`. */
export const postgresFlavour: SqlFlavour = {
  filledByTriggers: [],
  // The bench's own load commits need not wait for the disk (nothing of the measured writes changes).
  loadSettings: ['set local synchronous_commit = off'],
  secondaryIndexes: async (db, prefix) =>
    (
      await sql<{ name: string; create: string }>`select i.relname as name, pg_get_indexdef(i.oid) as create
        from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
        where t.relname like ${`${prefix.replace(/_/g, '!_')}%`} escape '!' and t.relnamespace = 'public'::regnamespace
          and t.relname not like '%migration%'
          and not exists (select 1 from pg_constraint c where c.conindid = i.oid)
        order by i.relname`.execute(db)
    ).rows,
  series: (from, to) => `select generate_series(${from}::bigint, ${to}::bigint) as n`,
  uuidV7: (ms) => {
    const h = `lpad(to_hex(${ms}), 12, '0')`;
    const r = `md5(random()::text)`;
    return `(select substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-' || substr('89ab', 1 + floor(random() * 4)::int, 1) || substr(r, 4, 3) || '-' || substr(r, 7, 12) from (select ${h} as h, ${r} as r) x)`;
  },
  columns: async (db, table) =>
    (
      await sql<{ column_name: string }>`select column_name from information_schema.columns where table_name = ${table} order by ordinal_position`.execute(db)
    ).rows.map((row) => row.column_name),
};

/** SQLite: a recursive CTE for the series, `pragma_table_info`; its step triggers write `attempts`. */
export const sqliteFlavour: SqlFlavour = {
  filledByTriggers: ['attempts'],
  loadSettings: [],
  secondaryIndexes: async (db, prefix) =>
    (
      await sql<{ name: string; create: string }>`select name, sql as "create" from sqlite_master
        where type = 'index' and sql is not null and tbl_name like ${`${prefix.replace(/_/g, '!_')}%`} escape '!'
          and tbl_name not like '%migration%' order by name`.execute(db)
    ).rows,
  series: (from, to) => `with recursive s(n) as (select ${from} union all select n + 1 from s where n < ${to}) select n from s`,
  uuidV7: (ms) => {
    const h = `printf('%012x', ${ms})`;
    const r = `lower(hex(randomblob(10)))`;
    return `(select substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-' || substr('89ab', 1 + abs(random() % 4), 1) || substr(r, 4, 3) || '-' || substr(r, 7, 12) from (select ${h} as h, ${r} as r))`;
  },
  columns: async (db, table) =>
    (await sql<{ name: string }>`select name from pragma_table_info(${table}) order by cid`.execute(db)).rows.map((row) => row.name),
};
