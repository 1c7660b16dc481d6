/**
 * `pnpm --filter @cairn/bench run experiment:pg-batch-shapes [--n=64] [--rounds=40] [--sync=off]`
 *
 * What the SERVER spends per write of one group commit statement of N finished-step writes (one
 * per run, N runs claimed), by its shape: the shipped one (decision 60: `unnest` of array
 * parameters, `step_insert_v2` called LATERAL row by row) against one set-based statement (the
 * run rows share-locked in one `SELECT … FOR SHARE`, the steps and their attempts inserted by two
 * data-modifying CTEs; not shipped: it needs no migration, but PostgreSQL plans it anew on every
 * execution). With `--n=1` also the single call as the store sends a lone write. Both as named
 * statements from plain `pg`, alternating; the server backend's CPU from `/proc/<pid>/schedstat`
 * and the wall time per write, medians of the rounds after the first. Same durable server as
 * `pnpm bench`; `--sync=off` takes the WAL flush out of the wall time.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createKyselyStore } from '@cairn/kysely';
import { withPostgresExperiment } from './experiment-postgres.js';
import { median } from '../stats.js';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const N = Number(option('n', '64'));
const ROUNDS = Number(option('rounds', '40'));
const TYPES = 'text bigint text text text text integer text integer smallint text text bigint text bigint text bigint text bigint text text smallint'.split(
  ' ',
);
// The 22 parameters of step_insert_v2 (STEP_INSERT_PARAMS), in call order.
const NAMES =
  'p_run_id p_fence p_key_hash p_step_key p_name p_kind p_seq p_status p_max_attempts p_queued p_output p_error p_wake_at p_child_run_id p_turn p_worker p_now p_attempt_status p_attempt_started_at p_attempt_output p_attempt_error p_async'.split(
    ' ',
  );
const arrays = TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ');
const LATERAL = `select t.i, f.r from unnest(${arrays}) with ordinality as t(${NAMES.join(', ')}, i) cross join lateral "cairn_step_insert_v2"(${NAMES.map((n) => `t.${n}`).join(', ')}) as f(r)`;
const SET = `with t as (select * from unnest(${arrays}) with ordinality as t(${NAMES.join(', ')}, i)),
r as (select r.id, r.fence, r.status from cairn_runs r where r.id in (select p_run_id from t) order by r.id for share),
ok as (select t.* from t join r on r.id = t.p_run_id where not ((t.p_fence is not null and r.fence <> t.p_fence) or r.status in ('completed', 'failed', 'cancelled'))),
s as (insert into cairn_steps (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at, turn, fence)
  select p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now, p_turn, p_fence from ok
  on conflict (run_id, key_hash) do nothing returning run_id, key_hash),
a as (insert into cairn_attempts (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
  select ok.p_run_id, ok.p_key_hash, 1, ok.p_step_key, ok.p_seq, case when ok.p_status = 'running' then 'running' else ok.p_attempt_status end, ok.p_worker,
    case when ok.p_status = 'running' then ok.p_now else ok.p_attempt_started_at end, case when ok.p_status = 'running' then null else ok.p_now end,
    case when ok.p_status = 'running' then null else ok.p_attempt_output end, case when ok.p_status = 'running' then null else ok.p_attempt_error end
  from ok join s on s.run_id = ok.p_run_id and s.key_hash = ok.p_key_hash where ok.p_status = 'running' or ok.p_attempt_status is not null)
select t.i, case when r.id is null then '{}'::json
  when (t.p_fence is not null and r.fence <> t.p_fence) or r.status in ('completed', 'failed', 'cancelled') then json_build_object('fence', r.fence, 'status', r.status)
  when s.run_id is not null then null
  else json_build_object('fence', r.fence, 'status', r.status, 'step', (select row_to_json(x) from cairn_steps x where x.run_id = t.p_run_id and x.key_hash = t.p_key_hash)) end as r
from t left join r on r.id = t.p_run_id left join s on s.run_id = t.p_run_id and s.key_hash = t.p_key_hash`;

const CALL = `select "cairn_step_insert_v2"(${TYPES.map((t, i) => `$${i + 1}::${t}`).join(', ')}) as r`;

function lit(values: readonly (string | number | null)[]): string {
  return `{${values.map((v) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : `"${v.replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`;
}

await withPostgresExperiment(async ({ db, client }) => {
  const store = createKyselyStore({ db });
  const now = Date.now();
  const runs: { id: string; fence: number }[] = [];
  for (let j = 0; j < N; j++) {
    const id = crypto.randomUUID();
    await store.runs.create({ id, workflow: 'w', version: '1', input: null }, now);
    runs.push({ id, fence: (await store.runs.claim(id, 'w', 3_600_000, now))!.fence as number });
  }
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const backendNs = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  const SHAPES = N === 1 ? ['lateral', 'set', 'call'] : ['lateral', 'set'];
  const figures: Record<string, { cpu: number[]; wall: number[] }> = Object.fromEntries(SHAPES.map((k) => [k, { cpu: [], wall: [] }]));
  if (option('sync', 'on') === 'off') await client.query('set synchronous_commit = off');
  let seq = 0;
  for (let round = 0; round <= ROUNDS; round++) {
    for (const shape of round % 2 === 0 ? SHAPES : [...SHAPES].reverse()) {
      seq += 1;
      const writes = runs.map(({ id, fence }) => {
        const key = `s${seq}`;
        const h = createHash('sha256').update(key).digest('hex');
        return [id, fence, h, key, key, 'task', seq, 'succeeded', 3, 0, 'null', null, null, null, seq, 'w-1', now, 'succeeded', now, 'null', null, 0];
      });
      writes.sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
      const params = NAMES.map((_, c) => lit(writes.map((w) => w[c] as string | number | null)));
      const c0 = backendNs();
      const t0 = performance.now();
      const { rows } =
        shape === 'call'
          ? await client.query({ name: shape, text: CALL, values: writes[0]! })
          : await client.query({ name: shape, text: shape === 'set' ? SET : LATERAL, values: params });
      const wall = performance.now() - t0;
      const cpu = (backendNs() - c0) / 1000;
      if (rows.length !== N || rows.some((r) => r.r !== null)) throw new Error(`${shape}: ${JSON.stringify(rows.slice(0, 2))}`);
      if (round === 0) continue;
      figures[shape]!.cpu.push(cpu / N);
      figures[shape]!.wall.push((wall * 1000) / N);
    }
  }
  const counts = await client.query('select (select count(*) from cairn_steps) s, (select count(*) from cairn_attempts) a');
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`N = ${N} writes per statement, ${ROUNDS} rounds; rows written ${JSON.stringify(counts.rows[0])}; load ${load}`);
  for (const [k, f] of Object.entries(figures))
    console.log(`${k}: server CPU ${median(f.cpu).toFixed(1)} µs/write, wall ${median(f.wall).toFixed(1)} µs/write`);
});
