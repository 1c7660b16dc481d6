/**
 * `pnpm --filter @cairn/bench run experiment:pg-step-layers [--steps=1000] [--rounds=5] [--only=a,b]`
 *
 * Where a sequential PostgreSQL step's time goes on the CLIENT, layer by layer, next to the floor
 * (one autocommit INSERT per step from a plain `pg` client): the same finished-step write sent as
 * the store sends it (`step_insert_v2`, named statement) from a plain `pg` client, through a
 * `pg` Pool, through Kysely's executor, as `store.steps.insert`, and a whole inline step of the
 * engine (a 100-step run, per step), each on the bench's durable server (fsync on). The series
 * alternate (reversed every other round; round 0 warms up); per series: wall time and this
 * process's CPU (user + system) per step, medians of the rounds. What one layer adds is its line
 * less the one above it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { createKyselyStore, migrateToLatest } from '@cairn/kysely';
import { postgresDb } from '../backends/sql-drivers.js';
import { startDurablePostgres } from '../servers/durable-postgres.js';
import { benchEngine, inlineRun } from '../scenarios/workflows.js';
import { median } from '../stats.js';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const STEPS = Number(option('steps', '1000'));
const ROUNDS = Number(option('rounds', '5'));
const TYPES = ['text', 'bigint', 'text', 'text', 'text', 'text', 'integer', 'text', 'integer', 'smallint', 'text'];
const TYPES_2 = ['text', 'bigint', 'text', 'bigint', 'text', 'bigint', 'text', 'bigint', 'text', 'text', 'smallint'];
const CALL = `select "cairn_step_insert_v2"(${[...TYPES, ...TYPES_2].map((type, i) => `$${i + 1}::${type}`).join(', ')}) as r`;
const FLOOR = 'INSERT INTO bench_floor (run_id, key, output, created_at) VALUES ($1, $2, $3, $4)';

/** The 22 arguments of a finished no-op step `i` of run `id`, as the store sends an inline step. */
function stepArgs(id: string, fence: number, i: number, now: number): (string | number | null)[] {
  const key = `s${i}`;
  const keyHash = createHash('sha256').update(key).digest('hex');
  return [id, fence, keyHash, key, key, 'task', i, 'succeeded', 3, 0, 'null', null, null, null, i + 1, 'w-1', now, 'succeeded', now, 'null', null, 0];
}

const server = await startDurablePostgres((line) => process.stderr.write(`${line}\n`));
try {
  const db = await postgresDb(server.url, undefined, 4);
  await migrateToLatest(db);
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  client.on('error', () => {});
  const pool = new pg.Pool({ connectionString: server.url, max: 4 });
  pool.on('error', () => {});
  await client.query('CREATE TABLE bench_floor (run_id text NOT NULL, key text NOT NULL, output jsonb, created_at bigint NOT NULL, PRIMARY KEY (run_id, key))');
  const store = createKyselyStore({ db, preparedStatements: true });
  const engine = benchEngine(store, { startMode: 'inline' });
  await engine.start({ workers: false });
  const now = Date.now();
  let n = 0;
  const newRun = async () => {
    const id = `layers-${process.pid}-${++n}`;
    await store.runs.create({ id, workflow: 'w', version: '1', input: null }, now);
    return { id, fence: (await store.runs.claim(id, 'w-1', 3_600_000, now))!.fence as number };
  };
  const series: Record<string, { what: string; run: () => Promise<void> }> = {
    floor: {
      what: 'floor: autocommit INSERT, plain pg client (unnamed, as the bench floor)',
      run: async () => {
        const id = `floor-${++n}`;
        for (let i = 0; i < STEPS; i++) await client.query(FLOOR, [id, `s${i}`, 'null', Date.now()]);
      },
    },
    client: {
      what: 'step_insert_v2, named, plain pg client',
      run: async () => {
        const { id, fence } = await newRun();
        for (let i = 0; i < STEPS; i++) await client.query({ name: 'layers_insert', text: CALL, values: stepArgs(id, fence, i, now) });
      },
    },
    pool: {
      what: 'step_insert_v2, named, pg Pool query',
      run: async () => {
        const { id, fence } = await newRun();
        for (let i = 0; i < STEPS; i++) await pool.query({ name: 'layers_insert', text: CALL, values: stepArgs(id, fence, i, now) });
      },
    },
    kysely: {
      what: "step_insert_v2, named, Kysely's executeQuery",
      run: async () => {
        const { id, fence } = await newRun();
        const text = { name: 'layers_insert', text: CALL } as unknown as string;
        for (let i = 0; i < STEPS; i++) await db.executeQuery(CompiledQuery.raw(text, stepArgs(id, fence, i, now)));
      },
    },
    store: {
      what: 'store.steps.insert of a finished step (named statements)',
      run: async () => {
        const { id, fence } = await newRun();
        for (let i = 0; i < STEPS; i++) {
          const key = `s${i}`;
          await store.steps.insert(
            id,
            fence,
            {
              key,
              name: key,
              kind: 'task',
              seq: i,
              status: 'succeeded',
              maxAttempts: 3,
              output: null,
              turn: i + 1,
              finishedAttempt: { status: 'succeeded', worker: 'w-1', startedAt: now, output: null },
            },
            now,
          );
        }
      },
    },
    engine: {
      what: 'engine: 100-step inline runs (startRun + result), per step (named statements)',
      run: async () => {
        for (let i = 0; i < STEPS / 100; i++) await inlineRun(engine, 100);
      },
    },
  };
  const only = option('only', '');
  const chosen = Object.keys(series).filter((k) => only === '' || only.split(',').includes(k));
  const figures = new Map<string, { wall: number[]; cpu: number[] }>();
  for (let round = 0; round <= ROUNDS; round++) {
    for (const k of round % 2 === 0 ? chosen : [...chosen].reverse()) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await series[k]!.run();
      const wall = ((performance.now() - t0) * 1000) / STEPS;
      const c = process.cpuUsage(c0);
      if (round === 0) continue;
      const f = figures.get(k) ?? { wall: [], cpu: [] };
      figures.set(k, f);
      f.wall.push(wall);
      f.cpu.push((c.user + c.system) / STEPS);
    }
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  process.stdout.write(
    `PostgreSQL ${server.version} (${server.settings}); ${ROUNDS} rounds × ${STEPS} steps per series, alternating; medians; load ${load}\n\n`,
  );
  process.stdout.write('| series | wall µs per step | × floor | client CPU µs per step (rounds) |\n| --- | ---: | ---: | --- |\n');
  const floorWall = figures.get('floor') ? median(figures.get('floor')!.wall) : Number.NaN;
  for (const k of chosen) {
    const f = figures.get(k)!;
    process.stdout.write(
      `| ${series[k]!.what} | ${median(f.wall).toFixed(0)} | ${(median(f.wall) / floorWall).toFixed(2)} | **${median(f.cpu).toFixed(1)}** (${f.cpu.map((x) => x.toFixed(0)).join(', ')}) |\n`,
    );
  }
  await engine.stop();
  await client.end();
  await pool.end();
  await db.destroy();
} finally {
  await server.stop();
}
