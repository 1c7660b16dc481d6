/**
 * `pnpm --filter @cairn/bench run experiment:pg-step-server-costs`
 *
 * What one inline step costs the PostgreSQL SERVER, next to the floor (one autocommit INSERT per
 * step): the server's execution time per call from `pg_stat_statements` with `track = all` (so the
 * statements inside the step functions show one by one) and WAL bytes per write
 * (`pg_current_wal_lsn()` before and after, after a checkpoint, nothing else writing). The step is
 * the one the engine writes per inline step since decision 33 (a finished step with its attempt
 * 1), sent from plain `pg` as the store sends it (unnamed statements, the same 22 arguments) to
 * `step_insert` (`cairn_0008_step_finished`, a table of four columns with the step as JSON) and to
 * `step_insert_v2` (`cairn_0012_step_insert_v2`, NULL when written). The three series alternate,
 * REPS times; medians. Same durable server as `pnpm bench`.
 */
import { withPostgresExperiment } from './experiment-postgres.js';
import { median } from '../stats.js';

const STEPS = 500;
const REPS = 3;
const ARGS = `$1::text, $2::bigint, $3::text, $4::text, $5::text, $6::text, $7::integer, $8::text, $9::integer, $10::smallint, $11::text,
  $12::text, $13::bigint, $14::text, $15::bigint, $16::text, $17::bigint, $18::text, $19::bigint, $20::text, $21::text, $22::smallint`;
const SERIES = {
  'floor: autocommit INSERT': 'insert into bench_floor values ($1, $2)',
  'step_insert (0008)': `select * from "cairn_step_insert"(${ARGS})`,
  'step_insert_v2 (0012)': `select "cairn_step_insert_v2"(${ARGS}) as r`,
} as const;

await withPostgresExperiment(async ({ server, store, client }) => {
  await client.query('create extension if not exists pg_stat_statements');
  await client.query(`set pg_stat_statements.track = 'all'`);
  await client.query('create table bench_floor (k text primary key, v text)');
  const now = Date.now();
  let runs = 0;
  const samples: Record<string, { server: number[]; wal: number[]; nested: Map<string, number[]> }> = {};
  for (let rep = 0; rep < REPS; rep++) {
    for (const [series, text] of Object.entries(SERIES)) {
      const id = `r${++runs}`;
      await store.runs.create({ id, workflow: 'w', version: '1', input: null }, now);
      const fence = (await store.runs.claim(id, 'w', 3_600_000, now))!.fence;
      const values = (i: number) =>
        text.startsWith('insert')
          ? [`${id}-${i}`, 'null']
          : [id, fence, `h${i}`, `k${i}`, 'n', 'task', i, 'succeeded', 3, 0, 'null', null, null, null, i + 1, 'w', now, 'succeeded', now, 'null', null, 0];
      // Full-page images after a checkpoint count the same for every series.
      await client.query('checkpoint');
      await client.query('select pg_stat_statements_reset()');
      const before = (await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
      for (let i = 0; i < STEPS; i++) await client.query(text, values(i));
      const wal = await client.query<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text as bytes', [before]);
      const stats = await client.query<{ query: string; mean: number; toplevel: boolean }>(
        `select regexp_replace(query, '\\s+', ' ', 'g') as query, mean_exec_time as mean, toplevel from pg_stat_statements where calls = $1`,
        [STEPS],
      );
      const s = (samples[series] ??= { server: [], wal: [], nested: new Map() });
      s.wal.push(Number(wal.rows[0]!.bytes) / STEPS);
      for (const row of stats.rows) {
        if (row.toplevel) s.server.push(row.mean * 1000);
        else {
          const key = row.query.slice(0, 70);
          s.nested.set(key, [...(s.nested.get(key) ?? []), row.mean * 1000]);
        }
      }
    }
  }
  process.stdout.write(`PostgreSQL ${server.version} (${server.settings}); ${REPS} × ${STEPS} writes per series, alternating; medians\n\n`);
  process.stdout.write(
    '| write | server µs per call (top level) | WAL bytes per write | inside the function (server µs per call) |\n| --- | ---: | ---: | --- |\n',
  );
  for (const [series, s] of Object.entries(samples)) {
    const nested = [...s.nested].map(([query, times]) => `\`${query}…\` ${median(times).toFixed(1)}`).join('; ');
    process.stdout.write(`| ${series} | ${median(s.server).toFixed(1)} | ${median(s.wal).toFixed(0)} | ${nested || '–'} |\n`);
  }
});
