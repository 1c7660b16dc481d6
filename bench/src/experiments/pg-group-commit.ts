/**
 * Group commit on PostgreSQL (issue 30 part 2, decision 60), the short way: the in-flight part of
 * the floor scenario alone, without its 10,000-step sequential warm-up, for a machine too loaded
 * for the full scenario to finish in its time limit. On the bench's durable server (fsync on): N
 * INSERT loops at once (one connection each, the floor), then N inline runs of 100 steps at once on
 * a store with group commit, then the same on one with `groupCommit: false` (both with named
 * statements, as `openPostgresStore` sends them), alternating repetition by repetition; medians of
 * the repetitions after the first, wall time per step.
 *
 *   pnpm --filter @cairn/bench run experiment:pg-group-commit [--reps=6] [--levels=8,64]
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createKyselyStore, migrateToLatest } from '@cairn/kysely';
import { postgresDb } from '../backends/sql-drivers.js';
import { startDurablePostgres } from '../servers/durable-postgres.js';
import { benchEngine, inlineRun } from '../scenarios/workflows.js';
import { median } from '../stats.js';

const { values } = parseArgs({ options: { reps: { type: 'string', default: '6' }, levels: { type: 'string', default: '8,64' } } });
const REPS = Number(values.reps);
const LEVELS = values.levels.split(',').map(Number);
const STEPS = 100;
const FLOOR_INSERT = 'INSERT INTO bench_floor (run_id, key, output, created_at) VALUES ($1, $2, $3, $4)';

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
  // Some warm-up of both stores' code (2,000 steps each).
  for (let i = 0; i < 20; i++) {
    await inlineRun(grouped, STEPS);
    await inlineRun(alone, STEPS);
  }
  let loop = 0;
  for (const n of LEVELS) {
    const samples = { floor: [] as number[], grouped: [] as number[], alone: [] as number[] };
    for (let rep = 0; rep <= REPS; rep++) {
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: n }, async (_, j) => {
          const runId = `floor-${++loop}-${j}`;
          for (let i = 0; i < STEPS; i++) await pool.query(FLOOR_INSERT, [runId, `s${i}`, 'null', Date.now()]);
        }),
      );
      const t1 = performance.now();
      await Promise.all(Array.from({ length: n }, () => inlineRun(grouped, STEPS)));
      const t2 = performance.now();
      await Promise.all(Array.from({ length: n }, () => inlineRun(alone, STEPS)));
      const t3 = performance.now();
      // The first repetition warms up.
      if (rep === 0) continue;
      const per = (ms: number) => (ms * 1000) / (n * STEPS);
      samples.floor.push(per(t1 - t0));
      samples.grouped.push(per(t2 - t1));
      samples.alone.push(per(t3 - t2));
    }
    const f = median(samples.floor);
    const g = median(samples.grouped);
    const a = median(samples.alone);
    console.log(
      `${n} in flight: floor ${f.toFixed(0)} µs/step, group commit ${g.toFixed(0)} µs (${(g / f).toFixed(2)}×), groupCommit: false ${a.toFixed(0)} µs (${(a / f).toFixed(2)}×)`,
    );
  }
  await grouped.stop();
  await alone.stop();
  await groupedDb.destroy();
  await aloneDb.destroy();
  await pool.end();
} finally {
  await server.stop();
}
