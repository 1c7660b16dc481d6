/**
 * `pnpm --filter @cairn/bench run experiment:pg-step-variants [-- --only=a,b --steps=N --rounds=N --sync=off --explain]`
 *
 * Where the PostgreSQL SERVER's time per inline step goes, and what variants of the step write
 * would save: each series sends STEPS writes of a finished step (the one write per inline step of
 * decision 33) from plain `pg`, and measures the server backend's CPU per call (its
 * `/proc/<pid>/schedstat`, so parse, plan, execution and commit all count, where
 * `pg_stat_statements` sees execution only), the wall time per call and the WAL bytes per call
 * (`pg_current_wal_lsn()` after a checkpoint). Each variant has its own table prefix, migrated to
 * the latest schema and then changed as the variant says, so the tables grow alike; the series
 * alternate (reversed every other round), round 0 is a warm-up, and the medians of ROUNDS rounds are
 * printed. Variants that edit the function start from the shipped `step_insert_v2`
 * (`pg_get_functiondef`), so they cannot drift from it. `--sync=off` sets
 * `synchronous_commit = off` in the session: the disk's flush leaves the figures, the CPU stays.
 * `--reads` then reads back each variant's last run (its STEPS steps) the way `steps.load` and
 * `history` do, alternating, and prints the server CPU per read: what an index the variant drops
 * costs the reads it served.
 * `--explain` also prints `EXPLAIN (ANALYZE, WAL, BUFFERS)` of the statements inside the function,
 * the indexes of the two tables it writes, and `track_functions`' time per call.
 * Same durable server as `pnpm bench`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { createKyselyStore, migrateToLatest, tableNames } from '@cairn/kysely';
import { withPostgresExperiment } from './experiment-postgres.js';
import { median } from '../stats.js';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const STEPS = Number(option('steps', '2000'));
const ROUNDS = Number(option('rounds', '7'));
const SYNC_OFF = option('sync', 'on') === 'off';
const TYPES = ['text', 'bigint', 'text', 'text', 'text', 'text', 'integer', 'text', 'integer', 'smallint', 'text'];
const TYPES_2 = ['text', 'bigint', 'text', 'bigint', 'text', 'bigint', 'text', 'bigint', 'text', 'text', 'smallint'];
const CAST = [...TYPES, ...TYPES_2].map((type, i) => `$${i + 1}::${type}`).join(', ');
const BARE = [...TYPES, ...TYPES_2].map((_, i) => `$${i + 1}`).join(', ');

/** How one variant changes the schema (after migration) and what it sends. */
interface Variant {
  what: string;
  /** Runs once on the variant's prefix `p`, whose shipped function is `fn`. */
  setup?: (c: pg.Client, p: string, fn: string) => Promise<unknown>;
  /** The statement text, given the prefix. */
  text: (p: string) => string;
  named?: boolean;
  /** One `text[]` argument instead of 22. */
  array?: boolean;
  /** Writes no step (the floor, empty functions). */
  writesNoStep?: boolean;
}

const call = (fn: string, args = CAST) => `select "${fn}"(${args}) as r`;
const shipped = (p: string) => call(`${p}step_insert_v2`);

async function editFunction(c: pg.Client, fn: string, edit: (definition: string) => string): Promise<void> {
  const { rows } = await c.query<{ def: string }>('select pg_get_functiondef($1::regproc) as def', [`"${fn}"`]);
  const edited = edit(rows[0]!.def);
  if (edited === rows[0]!.def) throw new Error(`the edit of ${fn} changed nothing`);
  await c.query(edited);
}

/** `<p>empty(arguments)`: a PL/pgSQL function that only returns NULL (what a call costs without its body). */
function createEmpty(c: pg.Client, p: string, args: string): Promise<unknown> {
  return c.query(`create function "${p}empty"(${args}) returns json language plpgsql as $f$ begin return null; end $f$`);
}

async function argumentsOf(c: pg.Client, fn: string): Promise<string> {
  return (await c.query<{ a: string }>('select pg_get_function_arguments($1::regproc) as a', [`"${fn}"`])).rows[0]!.a;
}

// The lock, the step and its finished attempt 1 as one data-modifying statement (the step this experiment sends).
function cteBody(p: string): string {
  const t = tableNames(p);
  return `with r as (select fence, status from "${t.runs}" where id = p_run_id for share),
  ok as (select 1 from r where not ((p_fence is not null and r.fence <> p_fence) or r.status in ('completed', 'failed', 'cancelled'))),
  s as (insert into "${t.steps}" (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at, turn, fence)
    select p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now, p_turn, p_fence from ok
    on conflict (run_id, key_hash) do nothing returning 1),
  a as (insert into "${t.attempts}" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
    select p_run_id, p_key_hash, 1, p_step_key, p_seq, p_attempt_status, p_worker, p_attempt_started_at, p_now, p_attempt_output, p_attempt_error
    from s where p_attempt_status is not null returning 1)`;
}

const VARIANTS: Record<string, Variant> = {
  floor: {
    what: 'one autocommit INSERT (2 columns, primary key)',
    setup: (c, p) => c.query(`create table "${p}floor" (k text primary key, v text)`),
    text: (p) => `insert into "${p}floor" values ($1, $2)`,
    writesNoStep: true,
  },
  shipped: { what: 'step_insert_v2 as shipped, unnamed statement (as the store sends it)', text: shipped },
  'shipped-again': { what: 'the same again (how far two identical series differ)', text: shipped },
  prepared: { what: 'the same as a named statement (`preparedStatements: true`)', text: shipped, named: true },
  'no-casts': { what: 'call text without the 22 casts', text: (p) => call(`${p}step_insert_v2`, BARE) },
  'empty-22': {
    what: 'an empty PL/pgSQL function of the same 22 arguments (call, parse and plan only)',
    setup: async (c, p, fn) => createEmpty(c, p, await argumentsOf(c, fn)),
    text: (p) => call(`${p}empty`),
    writesNoStep: true,
  },
  'empty-1': {
    what: 'an empty PL/pgSQL function of one text[] argument',
    setup: (c, p) => createEmpty(c, p, 'p text[]'),
    text: (p) => call(`${p}empty`, '$1::text[]'),
    array: true,
    writesNoStep: true,
  },
  'one-array': {
    what: 'one text[] argument, unpacked into a call of step_insert_v2',
    setup: (c, p) =>
      c.query(
        `create function "${p}arr"(p text[]) returns json language plpgsql as $f$ begin return "${p}step_insert_v2"(${[...TYPES, ...TYPES_2]
          .map((type, i) => `p[${i + 1}]${type === 'text' ? '' : `::${type}`}`)
          .join(', ')}); end $f$`,
      ),
    text: (p) => call(`${p}arr`, '$1::text[]'),
    array: true,
  },
  'array-body': {
    what: 'the shipped body over one text[] argument (each p_x read as p[i]::type)',
    setup: async (c, p, fn) => {
      const names = (await argumentsOf(c, fn)).split(', ').map((a) => a.split(' ') as [string, string]);
      await editFunction(c, fn, (d) =>
        names
          .reduce((body, [name, type], i) => body.replace(new RegExp(`\\b${name}\\b`, 'g'), `(p[${i + 1}]::${type})`), d.slice(d.indexOf('\nAS ') + 4))
          .replace(/^/, `CREATE FUNCTION public."${p}arrbody"(p text[])\n RETURNS json\n LANGUAGE plpgsql\nAS `),
      );
    },
    text: (p) => call(`${p}arrbody`, '$1::text[]'),
    array: true,
  },
  'call-procedure': {
    what: 'the same body as a procedure, `call p(…, null)` (a utility statement: no planner)',
    setup: (c, p, fn) =>
      editFunction(c, fn, (d) =>
        d
          .replace(`FUNCTION public.${fn}(`, `PROCEDURE public."${p}proc"(`)
          .replace(/\)\n RETURNS json\n/, ', INOUT r json)\n')
          .replace(/\n\s*(VOLATILE|STABLE)\b/, '')
          .replace(/return ([^;]*?);/gs, 'r := $1; return;'),
      ),
    text: (p) => `call "${p}proc"(${CAST}, null)`,
  },
  'empty-22-prepared': {
    what: 'the empty 22-argument function as a named statement',
    setup: async (c, p, fn) => createEmpty(c, p, await argumentsOf(c, fn)),
    text: (p) => call(`${p}empty`),
    named: true,
    writesNoStep: true,
  },
  'no-steps_run_seq': { what: 'without the index steps_run_seq', setup: (c, p) => c.query(`drop index "${p}steps_run_seq"`), text: shipped },
  'no-attempts_history': { what: 'without the index attempts_history', setup: (c, p) => c.query(`drop index "${p}attempts_history"`), text: shipped },
  'no-secondary-indexes': {
    what: 'without both',
    setup: (c, p) => c.query(`drop index "${p}steps_run_seq"; drop index "${p}attempts_history"`),
    text: shipped,
  },
  'no-on-conflict': {
    what: 'plain INSERT of the step (an existing key would raise instead)',
    setup: (c, _p, fn) => editFunction(c, fn, (d) => d.replace('on conflict (run_id, key_hash) do nothing', '')),
    text: shipped,
  },
  'no-lock': {
    what: 'run row read without FOR SHARE (NOT exact: reference only)',
    setup: (c, _p, fn) => editFunction(c, fn, (d) => d.replace(' for share;', ';')),
    text: shipped,
  },
  'no-attempt-row': {
    what: 'without the attempt INSERT of a finished step (NOT exact: the history loses attempt 1; reference only)',
    setup: (c, _p, fn) => editFunction(c, fn, (d) => d.replace(/(elsif p_attempt_status is not null then)\s*insert into[^;]*;/, '$1 null;')),
    text: shipped,
  },
  cte: {
    what: 'PL/pgSQL, the lock and both inserts in one data-modifying CTE',
    setup: async (c, p, fn) =>
      c.query(`create function "${p}cte"(${await argumentsOf(c, fn)}) returns json language plpgsql volatile as $fn$
declare v_fence bigint; v_status text; v_n int;
begin
  ${cteBody(p)}
  select r.fence, r.status, (select count(*) from s)::int into v_fence, v_status, v_n from r;
  if not found then return '{}'::json; end if;
  if v_n = 1 then return null; end if;
  return json_build_object('fence', v_fence, 'status', v_status);
end $fn$`),
    text: (p) => call(`${p}cte`),
  },
  'sql-function': {
    what: 'the same CTE as a LANGUAGE sql function',
    setup: async (c, p, fn) =>
      c.query(`create function "${p}sqlfn"(${await argumentsOf(c, fn)}) returns json language sql volatile as $fn$
${cteBody(p)}
select case when not exists (select 1 from r) then '{}'::json when exists (select 1 from s) then null
  else (select json_build_object('fence', r.fence, 'status', r.status) from r) end
$fn$`),
    text: (p) => call(`${p}sqlfn`),
  },
};

/** The 22 arguments of step `i` of run `id`, as the store sends a finished inline step. */
function stepArgs(id: string, fence: number, i: number, now: number): (string | number | null)[] {
  const key = `step-${i}`;
  const keyHash = createHash('sha256').update(key).digest('hex');
  const out = '{"ok":true}';
  return [id, fence, keyHash, key, 'step', 'task', i, 'succeeded', 3, 0, out, null, null, null, i + 1, 'worker-1', now + i, 'succeeded', now + i, out, null, 0];
}

await withPostgresExperiment(async ({ server, db, client }) => {
  const only = option('only', '');
  const chosen = Object.keys(VARIANTS).filter((v) => only === '' || only.split(',').includes(v));
  const prefix = (v: string) => `v${chosen.indexOf(v)}_`;
  const stores = new Map(chosen.map((v) => [v, createKyselyStore({ db, tablePrefix: prefix(v) })]));
  for (const v of chosen) {
    await migrateToLatest(db, { tablePrefix: prefix(v) });
    await VARIANTS[v]!.setup?.(client, prefix(v), `${prefix(v)}step_insert_v2`);
  }
  if (SYNC_OFF) await client.query('set synchronous_commit = off');
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const backendNs = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  const now = Date.now();
  const lastRun = new Map<string, string>();
  const figures = new Map<string, { cpu: number[]; wall: number[]; wal: number[] }>();
  for (let round = 0; round <= ROUNDS; round++) {
    for (const v of round % 2 === 0 ? chosen : [...chosen].reverse()) {
      const variant = VARIANTS[v]!;
      const store = stores.get(v)!;
      const id = `${crypto.randomUUID()}-${round}`;
      await store.runs.create({ id, workflow: 'w', version: '1', input: null }, now);
      const fence = (await store.runs.claim(id, 'w', 3_600_000, now))!.fence;
      const text = variant.text(prefix(v));
      await client.query('checkpoint');
      const lsn = (await client.query<{ l: string }>('select pg_current_wal_lsn()::text as l')).rows[0]!.l;
      const cpu0 = backendNs();
      const t0 = performance.now();
      for (let i = 0; i < STEPS; i++) {
        const args = v === 'floor' ? [`${id}-${i}`, '{"ok":true}'] : stepArgs(id, fence, i, now);
        const values: unknown[] = variant.array ? [args.map((a) => (a === null ? null : String(a)))] : args;
        const query: pg.QueryConfig = variant.named ? { name: `step_${v}`, text, values } : { text, values };
        const { rows } = await client.query<{ r: unknown }>(query);
        if (v !== 'floor' && rows[0]?.r !== null) throw new Error(`${v}: the step was not written: ${JSON.stringify(rows[0])}`);
      }
      const wall = ((performance.now() - t0) * 1000) / STEPS;
      const cpu = (backendNs() - cpu0) / 1000 / STEPS;
      const wal = (await client.query<{ b: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text as b', [lsn])).rows[0]!.b;
      if (!variant.writesNoStep) {
        const t = tableNames(prefix(v));
        const counts = await client.query<{ s: string; a: string }>(
          `select (select count(*) from "${t.steps}" where run_id = $1) as s, (select count(*) from "${t.attempts}" where run_id = $1) as a`,
          [id],
        );
        const { s, a } = counts.rows[0]!;
        if (Number(s) !== STEPS || Number(a) !== (v === 'no-attempt-row' ? 0 : STEPS))
          throw new Error(`${v}: ${s} steps and ${a} attempts written, not ${STEPS}`);
      }
      lastRun.set(v, id);
      if (round === 0) continue;
      const f = figures.get(v) ?? { cpu: [], wall: [], wal: [] };
      figures.set(v, f);
      f.cpu.push(cpu);
      f.wall.push(wall);
      f.wal.push(Number(wal) / STEPS);
    }
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  process.stdout.write(
    `PostgreSQL ${server.version} (${server.settings}${SYNC_OFF ? '; this session synchronous_commit=off' : ''}); ${ROUNDS} rounds × ${STEPS} calls per variant, alternating; medians; load ${load}\n\n`,
  );
  process.stdout.write('| variant | server CPU µs per call (median; rounds) | wall µs per call | WAL bytes per call |\n| --- | --- | ---: | ---: |\n');
  for (const [v, f] of figures) {
    const rounds = f.cpu.map((x) => x.toFixed(0)).join(', ');
    process.stdout.write(
      `| ${v}: ${VARIANTS[v]!.what} | **${median(f.cpu).toFixed(1)}** (${rounds}) | ${median(f.wall).toFixed(0)} | ${median(f.wal).toFixed(0)} |\n`,
    );
  }
  if (process.argv.includes('--reads')) {
    const stepWriters = chosen.filter((v) => !VARIANTS[v]!.writesNoStep);
    await compareReads(client, backendNs, new Map(stepWriters.map((v) => [v, { prefix: prefix(v), runId: lastRun.get(v)! }])));
  }
  if (process.argv.includes('--explain')) await explainInside(client, prefix(chosen[0]!), now);
});

/** Server CPU of the store's two reads of these tables (`steps.load`, `history`) of one run per variant, alternating. */
async function compareReads(client: pg.Client, backendNs: () => number, runs: Map<string, { prefix: string; runId: string }>): Promise<void> {
  const cpu = new Map<string, number[]>();
  const reads = 20;
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [v, { prefix: p, runId }] of round % 2 === 0 ? [...runs] : [...runs].reverse()) {
      const t = tableNames(p);
      const statements = {
        'steps.load': `select * from "${t.steps}" where run_id = $1 order by seq`,
        history: `select * from "${t.attempts}" where run_id = $1 order by started_at, step_seq, attempt`,
      };
      for (const [read, text] of Object.entries(statements)) {
        const cpu0 = backendNs();
        for (let i = 0; i < reads; i++) await client.query(text, [runId]);
        if (round > 0) cpu.set(`${read} | ${v}`, [...(cpu.get(`${read} | ${v}`) ?? []), (backendNs() - cpu0) / 1000 / reads]);
      }
    }
  }
  process.stdout.write(`\n| read of one ${STEPS}-step run | variant | server CPU µs per read (median; rounds) |\n| --- | --- | ---: |\n`);
  for (const [key, values] of [...cpu].sort(([a], [b]) => a.localeCompare(b))) {
    process.stdout.write(`| ${key} | **${median(values).toFixed(0)}** (${values.map((x) => x.toFixed(0)).join(', ')}) |\n`);
  }
}

/** The indexes the step write maintains, the function's time per call, and the plans of the statements inside it. */
async function explainInside(client: pg.Client, p: string, now: number): Promise<void> {
  const t = tableNames(p);
  const indexes = await client.query<{ d: string }>('select indexdef as d from pg_indexes where tablename in ($1, $2) order by tablename, indexname', [
    t.steps,
    t.attempts,
  ]);
  process.stdout.write(`\n${indexes.rows.map((r) => r.d).join('\n')}\n`);
  const id = crypto.randomUUID();
  await client.query(
    `insert into "${t.runs}" (id, workflow, version, input_json, status, fence, cancel_requested, created_at, updated_at) values ($1, 'w', '1', 'null', 'running', 1, 0, 0, 0)`,
    [id],
  );
  await client.query(`set track_functions = 'pl'`);
  await client.query('select pg_stat_reset()');
  for (let i = 0; i < 1000; i++) await client.query(call(`${p}step_insert_v2`), stepArgs(id, 1, i, now));
  await new Promise((resolve) => setTimeout(resolve, 1500)); // statistics reach the shared view after an idle second
  const fn = await client.query(
    'select funcname, calls, total_time / calls * 1000 as total_us, self_time / calls * 1000 as self_us from pg_stat_user_functions',
  );
  process.stdout.write(`\ntrack_functions: ${JSON.stringify(fn.rows)}\n`);
  const [, , keyHash] = stepArgs(id, 1, 1_000_000, now);
  const statements: Record<string, string> = {
    'run row FOR SHARE': `select fence, status from "${t.runs}" where id = $1 and $2::text is not null for share`,
    'step INSERT … ON CONFLICT DO NOTHING': `insert into "${t.steps}" (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, created_at, updated_at, turn, fence)
      values ($1, $2, 'k', 'step', 'task', 1000000, 'succeeded', 1, 3, 0, '{"ok":true}', 1, 1, 1, 1) on conflict (run_id, key_hash) do nothing`,
    'step INSERT, no ON CONFLICT': `insert into "${t.steps}" (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, created_at, updated_at, turn, fence)
      values ($1, $2, 'k', 'step', 'task', 1000000, 'succeeded', 1, 3, 0, '{"ok":true}', 1, 1, 1, 1)`,
    'attempt INSERT': `insert into "${t.attempts}" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json)
      values ($1, $2, 1, 'k', 1000000, 'succeeded', 'worker-1', 1, 1, '{"ok":true}')`,
  };
  for (const [label, text] of Object.entries(statements)) {
    await client.query('begin');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, wal, buffers, costs off) ${text}`, [id, keyHash]);
    await client.query('rollback');
    process.stdout.write(`\n-- ${label}\n${rows.map((r) => r['QUERY PLAN']).join('\n')}\n`);
  }
}
