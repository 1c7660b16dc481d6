/**
 * Group commit on PostgreSQL (issue 30 part 2, decision 60), the short way: the in-flight part of
 * the floor scenario alone, without its 10,000-step sequential warm-up, for a machine too loaded
 * for the full scenario to finish in its time limit. On the bench's durable server (fsync on): N
 * INSERT loops at once (one connection each, the floor), then N inline runs of 100 steps at once on
 * a store with group commit as it ships (up to 8 statements in flight per line, decision 71), on one
 * with one statement at a time (`groupCommitStatements: 1`, decision 60 as it first shipped), and on
 * one with `groupCommit: false` (all with named statements, as `openPostgresStore` sends them),
 * alternating repetition by repetition; medians of
 * the repetitions after the first, wall time per step. Beside each: the CPU per step of this
 * process (the client) and of the server's process tree (postmaster and backends), from /proc, so
 * that what a step costs the machine shows apart from how the scheduler shared it out. A level of
 * 1 is the sequential comparison (one INSERT loop against one run).
 *
 *   pnpm --filter @cairn/bench run experiment:pg-group-commit [--reps=6] [--levels=8,64] [--steps=100]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createKyselyStore, migrateToLatest } from '@cairn/kysely';
import { postgresDb } from '../backends/sql-drivers.js';
import { processTreeCpuMs } from '../servers/process-cpu.js';
import { startDurablePostgres } from '../servers/durable-postgres.js';
import { benchEngine, inlineRun } from '../scenarios/workflows.js';
import { median } from '../stats.js';

const { values } = parseArgs({
  options: { reps: { type: 'string', default: '6' }, levels: { type: 'string', default: '8,64' }, steps: { type: 'string', default: '100' } },
});
const REPS = Number(values.reps);
const LEVELS = values.levels.split(',').map(Number);
const STEPS = Number(values.steps);
const FLOOR_INSERT = 'INSERT INTO bench_floor (run_id, key, output, created_at) VALUES ($1, $2, $3, $4)';
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const server = await startDurablePostgres((line) => process.stderr.write(`${line}\n`));
try {
  const most = Math.max(...LEVELS);
  const groupedDb = await postgresDb(server.url, undefined, most);
  const aloneDb = await postgresDb(server.url, undefined, most);
  const pool = new pg.Pool({ connectionString: server.url, max: most });
  pool.on('error', () => {});
  await pool.query('CREATE TABLE bench_floor (run_id text NOT NULL, key text NOT NULL, output jsonb, created_at bigint NOT NULL, PRIMARY KEY (run_id, key))');
  await migrateToLatest(groupedDb);
  const grouped = benchEngine(createKyselyStore({ db: groupedDb, preparedStatements: true }), { startMode: 'inline' });
  const alone = benchEngine(createKyselyStore({ db: aloneDb, preparedStatements: true, groupCommit: false }), { startMode: 'inline' });
  await grouped.start({ workers: false });
  await alone.start({ workers: false });
  // The same store with one group commit statement in flight at a time (decision 60, before decision 71).
  const singleDb = await postgresDb(server.url, undefined, most);
  const single = benchEngine(createKyselyStore({ db: singleDb, preparedStatements: true, groupCommitStatements: 1 }), { startMode: 'inline' });
  await single.start({ workers: false });
  // Some warm-up of both sides' code (2,000 steps each).
  for (let i = 0; i < 20; i++) {
    await inlineRun(grouped, 100);
    await inlineRun(alone, 100);
    await inlineRun(single, 100);
    const runId = `floor-warm-${i}`;
    for (let s = 0; s < 100; s++) await pool.query(FLOOR_INSERT, [runId, `s${s}`, 'null', Date.now()]);
  }
  process.stdout.write(`load ${load()} at the start\n`);
  let loop = 0;
  for (const n of LEVELS) {
    const samples: Record<string, { wall: number[]; client: number[]; server: number[] }> = {
      floor: { wall: [], client: [], server: [] },
      grouped: { wall: [], client: [], server: [] },
      alone: { wall: [], client: [], server: [] },
      single: { wall: [], client: [], server: [] },
    };
    const measure = async (side: string, fn: () => Promise<unknown>, keep: boolean) => {
      const c0 = process.cpuUsage();
      const s0 = processTreeCpuMs(server.pid) ?? Number.NaN;
      const t0 = performance.now();
      await fn();
      const wall = performance.now() - t0;
      const c = process.cpuUsage(c0);
      const s = (processTreeCpuMs(server.pid) ?? Number.NaN) - s0;
      if (!keep) return;
      const per = (ms: number) => (ms * 1000) / (n * STEPS);
      samples[side]!.wall.push(per(wall));
      samples[side]!.client.push(per((c.user + c.system) / 1000));
      samples[side]!.server.push(per(s));
    };
    for (let rep = 0; rep <= REPS; rep++) {
      // The first repetition warms up.
      const keep = rep > 0;
      await measure(
        'floor',
        () =>
          Promise.all(
            Array.from({ length: n }, async (_, j) => {
              const runId = `floor-${++loop}-${j}`;
              for (let i = 0; i < STEPS; i++) await pool.query(FLOOR_INSERT, [runId, `s${i}`, 'null', Date.now()]);
            }),
          ),
        keep,
      );
      await measure('grouped', () => Promise.all(Array.from({ length: n }, () => inlineRun(grouped, STEPS))), keep);
      await measure('alone', () => Promise.all(Array.from({ length: n }, () => inlineRun(alone, STEPS))), keep);
      await measure('single', () => Promise.all(Array.from({ length: n }, () => inlineRun(single, STEPS))), keep);
    }
    const f = median(samples['floor']!.wall);
    const line = (side: string) => {
      const s = samples[side]!;
      const w = median(s.wall);
      return `${w.toFixed(0)} µs (${(w / f).toFixed(2)}×; CPU client ${median(s.client).toFixed(0)} + server ${median(s.server).toFixed(0)} µs)`;
    };
    process.stdout.write(
      `${n} in flight: floor ${line('floor')}, group commit ${line('grouped')}, one statement at a time ${line('single')}, groupCommit: false ${line('alone')}; load ${load()}\n`,
    );
  }
  await grouped.stop();
  await alone.stop();
  await groupedDb.destroy();
  await aloneDb.destroy();
  await single.stop();
  await singleDb.destroy();
  await pool.end();
} finally {
  await server.stop();
}
