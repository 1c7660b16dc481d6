/**
 * `pnpm --filter @cairn/bench run profile:steps <memory|sqlite|postgres> [runs] [out.cpuprofile] [--no-profile] [--named]`
 *
 * Runs `runs` (default 200) sequential 100-step inline runs (`startRun` + `result()`) on one store,
 * after a warm-up, with V8's CPU profiler (the one `node --cpu-prof` drives, here through
 * `node:inspector` so the profile covers the measured runs only), writes the profile (default
 * `bench/results/profiles/<backend>.cpuprofile`, not committed) and prints the CPU per step;
 * `summarize-profile.ts` says where the time went. PostgreSQL is
 * the bench's own durable server (fsync on), started and stopped here; SQLite a temporary file.
 * The store is uncounted, as an application opens it; `--named` sends PostgreSQL's routine calls as
 * named statements (`preparedStatements: true`, `openPostgresStore`'s default).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryStore } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { createKyselyStore, migrateToLatest } from '@cairn/kysely';
import { postgresDb, sqliteDb, type AnyDb } from '../backends/sql-drivers.js';
import { startDurablePostgres } from '../servers/durable-postgres.js';
import { benchEngine, inlineRun } from '../scenarios/workflows.js';

const backend = process.argv[2] ?? 'memory';
const runs = Number(process.argv[3] ?? 200);
const STEPS = 100;
const outArg = process.argv[4];
const out = resolve(
  outArg !== undefined && !outArg.startsWith('--')
    ? outArg
    : join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'results', 'profiles', `${backend}.cpuprofile`),
);

const stops: (() => Promise<void>)[] = [];
async function open(): Promise<WorkflowStore> {
  if (backend === 'memory') return createMemoryStore();
  let db: AnyDb;
  if (backend === 'postgres') {
    const server = await startDurablePostgres((line) => process.stderr.write(`${line}\n`));
    stops.push(server.stop);
    db = await postgresDb(server.url);
  } else if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-profile-'));
    stops.push(async () => rmSync(dir, { recursive: true, force: true }));
    db = await sqliteDb(join(dir, 'profile.sqlite'));
  } else {
    throw new Error(`unknown backend ${backend} (memory, sqlite, postgres)`);
  }
  stops.unshift(() => db.destroy());
  await migrateToLatest(db);
  return createKyselyStore({ db, preparedStatements: backend === 'postgres' && process.argv.includes('--named') });
}

const store = await open();
const engine = benchEngine(store, { startMode: 'inline' });
await engine.start({ workers: false });
try {
  const batch = async (n: number) => {
    for (let i = 0; i < n; i++) await inlineRun(engine, STEPS);
  };
  await batch(Math.max(5, runs / 10));
  // V8's CPU profiler (what `node --cpu-prof` runs), started after the warm-up so that module
  // loading and compilation stay out of the profile.
  // `--no-profile`: only the CPU per step (the profiler itself costs CPU).
  const profiling = !process.argv.includes('--no-profile');
  const session = new Session();
  if (profiling) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await batch(runs);
  const cpu = process.cpuUsage(c0);
  if (profiling) {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(profile));
  }
  const steps = runs * STEPS;
  process.stdout.write(
    `${backend}: ${runs} runs of ${STEPS} steps: ${(((performance.now() - t0) * 1000) / steps).toFixed(1)} µs wall, ${((cpu.user + cpu.system) / steps).toFixed(1)} µs CPU per step (profile: ${out})\n`,
  );
} finally {
  await engine.stop();
  await store.close();
  for (const stop of stops) await stop();
}
