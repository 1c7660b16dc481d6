/**
 * The multi-process proof: four worker processes, N runs of a 10-step workflow, three SIGKILLs of
 * a random worker (each replaced at once), then checks from the store and the queue:
 *   - every run completed; every step of every run recorded once and succeeded (`steps.load`);
 *   - no run left pending/waiting/running; no job left in the queue;
 *   - every step body ran at least once (from the counts file), and how many ran again.
 * Prints one Markdown table row per pairing; exits 1 on any failed check.
 *
 *   node --import tsx --conditions=@cairn/source e2e/proof/run-proof.ts \
 *     [--runs 500] [--kills 3] [--workers 4] [--pairing postgres+pg-boss|redis+bullmq|postgres+store|all]
 *     [--strategy per-workflow|shared-groups] [--timeout-s 600]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { QueueStrategy } from '@cairn/core';
import { createPostgresDatabase, dropPostgresDatabase, freshRedisPrefix, stopSharedServices, usePostgres, useRedis } from '../src/services/index.js';
import { openEngine, PG_BOSS_SCHEMA, proofWorkflow, STEPS, type PairingName, type ProofConfig } from './common.js';
import { ioredis, kyselyStore, pg } from './deps.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '500' },
    kills: { type: 'string', default: '3' },
    workers: { type: 'string', default: '4' },
    pairing: { type: 'string', default: 'all' },
    strategy: { type: 'string', default: 'per-workflow' },
    'timeout-s': { type: 'string', default: '600' },
  },
});
const RUNS = Number(values.runs);
const KILLS = Number(values.kills);
const WORKERS = Number(values.workers);
const TIMEOUT_MS = Number(values['timeout-s']) * 1000;
const strategy = values.strategy as QueueStrategy;
const pairings: PairingName[] = values.pairing === 'all' ? ['postgres+pg-boss', 'redis+bullmq', 'postgres+store'] : [values.pairing as PairingName];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (message: string) => console.error(`[proof ${new Date().toISOString().slice(11, 19)}] ${message}`);

interface Outcome {
  pairing: string;
  failures: string[];
  line: string;
}

function startWorker(config: ProofConfig): Promise<ChildProcess> {
  const child = fork(new URL('./worker.ts', import.meta.url), {
    execArgv: ['--import', 'tsx', '--conditions=@cairn/source'],
    env: { ...process.env, CAIRN_PROOF_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('worker did not start in 60 s')), 60_000);
    child.once('message', () => {
      clearTimeout(timer);
      resolve(child);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited early (${code})`));
    });
  });
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.send({ stop: true });
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Jobs still waiting, active or delayed in the queue. */
async function queuedJobs(config: ProofConfig): Promise<number> {
  // No broker: jobs live in the workers' memory, gone with them; the store's checks cover it.
  if (config.pairing === 'postgres+store') return 0;
  if (config.pairing === 'postgres+pg-boss') {
    const { default: pgm } = await pg();
    const client = new pgm.Client({ connectionString: config.url });
    await client.connect();
    try {
      const r = await client.query(
        `SELECT count(*)::int AS n FROM ${PG_BOSS_SCHEMA}.job WHERE state IN ('created', 'retry', 'active') AND name NOT LIKE '\\_\\_%'`,
      );
      return r.rows[0].n as number;
    } finally {
      await client.end();
    }
  }
  const { Redis } = await ioredis();
  const redis = new Redis(config.url);
  try {
    let n = 0;
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${config.prefix}bull:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    for (const key of keys) {
      const kind = key.slice(key.lastIndexOf(':') + 1);
      if (kind === 'wait' || kind === 'active' || kind === 'paused') n += await redis.llen(key);
      else if (kind === 'delayed' || kind === 'prioritized' || kind === 'waiting-children') n += await redis.zcard(key);
    }
    return n;
  } finally {
    redis.disconnect();
  }
}

async function runPairing(pairing: PairingName): Promise<Outcome> {
  const failures: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'cairn-proof-'));
  const countsFile = join(dir, 'counts.tsv');
  writeFileSync(countsFile, '');
  let config: ProofConfig;
  let cleanup: () => Promise<void>;
  if (pairing === 'postgres+pg-boss' || pairing === 'postgres+store') {
    // Servers of our own (local binaries), never containers: no container networking in the proof.
    const service = await usePostgres({ provider: 'local' });
    if (service.skipped) throw new Error(`no PostgreSQL: ${service.reason}`);
    const dbUrl = await createPostgresDatabase(service.url);
    config = { pairing, strategy, url: dbUrl, prefix: '', countsFile };
    const { default: pgm } = await pg();
    const { Kysely, PostgresDialect } = await import('./deps.js').then((d) => d.kysely());
    const db = new Kysely({ dialect: new PostgresDialect({ pool: new pgm.Pool({ connectionString: dbUrl, max: 2 }) }) });
    const { migrateToLatest } = await kyselyStore();
    await migrateToLatest(db, { tablePrefix: 'cairn_' });
    await db.destroy();
    cleanup = () => dropPostgresDatabase(dbUrl);
  } else {
    const service = await useRedis({ provider: 'local' });
    if (service.skipped) throw new Error(`no Redis: ${service.reason}`);
    const prefix = `${freshRedisPrefix()}`;
    config = { pairing, strategy, url: service.url, prefix, countsFile };
    cleanup = async () => {};
  }
  log(`${pairing} (${strategy}): ${RUNS} runs, ${WORKERS} workers, ${KILLS} kills`);

  // The driver's own engine only submits runs (no workers).
  const producer = await openEngine(config, 'proof-driver');
  await producer.engine.start({ workers: false });
  const workers: (ChildProcess | undefined)[] = await Promise.all(Array.from({ length: WORKERS }, () => startWorker(config)));
  const started = Date.now();
  const workflow = proofWorkflow(countsFile);
  const ids: string[] = [];
  for (let i = 0; i < RUNS; i += 25) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(25, RUNS - i) }, (_, j) => producer.engine.startRun(workflow, { n: i + j })),
    );
    ids.push(...batch.map((h) => h.id));
  }
  log(`submitted ${ids.length} runs in ${Date.now() - started} ms`);

  // Kill a random live worker when 10%, 30%, 50% ... of the runs are terminal (at least 1.5 s
  // apart), replacing it at once (the replacement starts in the background). Runs executing in
  // parallel end together, in waves, so "terminal" can jump from none to all: a kill also lands
  // once 2.5 s passed without one while runs are still in flight.
  const killAt = Array.from({ length: KILLS }, (_, k) => Math.floor(RUNS * Math.min(0.8, 0.1 + 0.2 * k)));
  let kills = 0;
  let lastKill = 0;
  const replacements: Promise<void>[] = [];
  const statuses = new Map<string, string>();
  const pending = new Set(ids);
  const deadline = started + TIMEOUT_MS;
  while (pending.size > 0 && Date.now() < deadline) {
    const list = [...pending];
    for (let i = 0; i < list.length; i += 50) {
      const runs = await Promise.all(list.slice(i, i + 50).map((id) => producer.store.runs.get(id)));
      for (const run of runs) {
        if (!run) continue;
        statuses.set(run.id, run.status);
        if (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') pending.delete(run.id);
      }
    }
    const done = RUNS - pending.size;
    const due = done >= killAt[kills]! || Date.now() - (lastKill || started) >= 2500;
    if (kills < KILLS && pending.size > 0 && due && Date.now() - lastKill >= 1500) {
      const live = workers.map((w, i) => [w, i] as const).filter(([w]) => w !== undefined);
      const [child, slot] = live[Math.floor(Math.random() * live.length)]!;
      child!.kill('SIGKILL');
      workers[slot] = undefined;
      kills++;
      lastKill = Date.now();
      log(`kill ${kills}: SIGKILL worker pid ${child!.pid} at ${done}/${RUNS} runs terminal`);
      replacements.push(startWorker(config).then((w) => void (workers[slot] = w)));
    }
    if (pending.size > 0) await sleep(500);
  }
  const wallMs = Date.now() - started;
  if (pending.size > 0) failures.push(`${pending.size} runs not terminal after ${TIMEOUT_MS / 1000} s`);
  if (kills < KILLS) failures.push(`only ${kills} of ${KILLS} kills happened`);
  log(`all terminal in ${wallMs} ms; checking`);

  // Checks from the store.
  const byStatus: Record<string, number> = {};
  let stepProblems = 0;
  let retriedSteps = 0;
  for (let i = 0; i < ids.length; i += 50) {
    await Promise.all(
      ids.slice(i, i + 50).map(async (id) => {
        const run = await producer.store.runs.get(id);
        const status = run?.status ?? 'missing';
        byStatus[status] = (byStatus[status] ?? 0) + 1;
        const steps = await producer.store.steps.load(id);
        const keys = new Set(steps.map((s) => s.key));
        const ok = steps.length === STEPS && keys.size === STEPS && steps.every((s) => s.status === 'succeeded');
        if (!ok) {
          stepProblems++;
          if (stepProblems <= 5) failures.push(`run ${id}: steps ${JSON.stringify(steps.map((s) => [s.key, s.status]))}`);
        }
        retriedSteps += steps.filter((s) => s.attempt > 1).length;
      }),
    );
  }
  if ((byStatus.completed ?? 0) !== RUNS) failures.push(`run statuses ${JSON.stringify(byStatus)} (want ${RUNS} completed)`);
  for (const s of ['pending', 'waiting', 'running']) if (byStatus[s]) failures.push(`${byStatus[s]} runs left ${s}`);
  if (stepProblems > 0) failures.push(`${stepProblems} runs whose steps are not exactly ${STEPS} succeeded`);

  // The queue drains (an orchestrator job may still be finishing as the last run completes).
  let jobs = await queuedJobs(config);
  for (let t = 0; jobs > 0 && t < 30; t++) {
    await sleep(1000);
    jobs = await queuedJobs(config);
  }
  if (jobs > 0) failures.push(`${jobs} jobs left in the queue`);

  await Promise.allSettled(replacements);
  for (const w of workers) if (w) await stopWorker(w);
  await producer.close();

  // Step bodies, from the counts file.
  const lines = readFileSync(countsFile, 'utf8').split('\n').filter(Boolean);
  const ranPer = new Map<string, number>();
  for (const line of lines) ranPer.set(line, (ranPer.get(line) ?? 0) + 1);
  const expected = RUNS * STEPS;
  if (ranPer.size !== expected) failures.push(`${ranPer.size} distinct step bodies ran (want ${expected})`);
  const reExecuted = lines.length - ranPer.size;
  const maxPer = Math.max(0, ...ranPer.values());

  rmSync(dir, { recursive: true, force: true });
  if (pairing === 'redis+bullmq') {
    const { Redis } = await ioredis();
    const redis = new Redis(config.url);
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${config.prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (batch.length) await redis.del(...batch);
    } while (cursor !== '0');
    redis.disconnect();
  }
  await cleanup().catch(() => {});

  const verdict = failures.length === 0 ? 'pass' : 'FAIL';
  const line = `| ${pairing} | ${strategy} | ${RUNS} | ${expected} | ${WORKERS} | ${kills} | ${lines.length} | ${reExecuted} (max ${maxPer}× one step) | ${retriedSteps} | ${(wallMs / 1000).toFixed(1)} s | ${jobs} | ${verdict} |`;
  return { pairing, failures, line };
}

const outcomes: Outcome[] = [];
try {
  for (const pairing of pairings) {
    try {
      outcomes.push(await runPairing(pairing));
    } catch (error) {
      outcomes.push({ pairing, failures: [String(error)], line: `| ${pairing} | ${strategy} | error: ${String(error)} |` });
    }
  }
} finally {
  await stopSharedServices().catch(() => {});
}
console.log('| pairing | strategy | runs | steps | workers | SIGKILLs | step bodies run | re-executed bodies | steps with attempt > 1 | wall time | jobs left | result |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const o of outcomes) console.log(o.line);
for (const o of outcomes) for (const f of o.failures) console.log(`FAIL ${o.pairing}: ${f}`);
process.exit(outcomes.every((o) => o.failures.length === 0) ? 0 : 1);
