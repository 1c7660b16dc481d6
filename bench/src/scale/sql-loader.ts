import { sql } from 'kysely';
import type { AnyDb } from '../backends/sql-drivers.js';
import { STATUS_MIX, WORKFLOW_COUNT } from './scale-workflows.js';

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
}

/** The template runs (one real run per status, made by the engine) that every loaded run copies. */
export type Templates = Record<'completed' | 'failed' | 'cancelled', string>;

/** The tables a run's rows live in, the run itself first. */
const RUN_TABLES = ['runs', 'steps', 'attempts', 'state', 'events'] as const;

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
    await sql.raw(`drop table if exists scale_ids`).execute(trx);
    await sql
      .raw(
        `create temp table scale_ids as
         select n, tpl, created, ${flavour.uuidV7('created')} as id
         from (select n, case ${cases} end as tpl, ${createdFrom} + (n - ${first}) * ${spacingMs} as created
               from (${flavour.series(first, last)}) g) s`,
      )
      .execute(trx);
    for (const table of RUN_TABLES) {
      if (flavour.filledByTriggers.includes(table)) continue;
      const runKey = table === 'runs' ? 'id' : 'run_id';
      const columns = columnsOf.get(table)!;
      const values = columns.map((column) => {
        if (column === runKey) return 'i.id';
        if (table === 'runs' && column === 'workflow') return `'scale-w' || ((i.n + i.n / 100) % ${WORKFLOW_COUNT})`;
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
    await sql.raw(`drop table scale_ids`).execute(trx);
  });
}

/** PostgreSQL: `generate_series`, `information_schema`. */
export const postgresFlavour: SqlFlavour = {
  filledByTriggers: [],
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
  series: (from, to) => `with recursive s(n) as (select ${from} union all select n + 1 from s where n < ${to}) select n from s`,
  uuidV7: (ms) => {
    const h = `printf('%012x', ${ms})`;
    const r = `lower(hex(randomblob(10)))`;
    return `(select substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-' || substr('89ab', 1 + abs(random() % 4), 1) || substr(r, 4, 3) || '-' || substr(r, 7, 12) from (select ${h} as h, ${r} as r))`;
  },
  columns: async (db, table) =>
    (await sql<{ name: string }>`select name from pragma_table_info(${table}) order by cid`.execute(db)).rows.map((row) => row.name),
};
