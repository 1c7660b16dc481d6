/**
 * The multi-process proof: four worker processes, N runs of a 10-step workflow and L runs of a
 * workflow limited to 2 at once per tenant (3 tenants), three SIGKILLs of a worker (each replaced at
 * once; while limited runs are in flight, always one that is running a limited body), then checks
 * from the store and the queue:
 *   - every run completed; every step of every run recorded once and succeeded (`steps.load`);
 *   - no run left pending/waiting/running; no job left in the queue;
 *   - every step body ran at least once (from the counts file), and how many ran again;
 * and from the limited runs' ledgers (`judge-ledgers.ts`): at most 2 runs of a tenant with a body
 * in flight at any instant, every limited run completed, every body a kill cut short ran again elsewhere.
 * Prints one Markdown table row per pairing; exits 1 on any failed check.
 *
 *   node --import tsx --conditions=@cairn/source e2e/proof/run-proof.ts \
 *     [--runs 500] [--limited 24] [--limited-ms 1500] [--kills 3] [--workers 4]
 *     [--pairing postgres+pg-boss|redis+bullmq|postgres+store|all]
 *     [--strategy per-workflow|shared-groups] [--timeout-s 600]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { QueueStrategy } from '@cairn/core/backend';
import { createPostgresDatabase, dropPostgresDatabase, freshRedisPrefix, stopSharedServices, usePostgres, useRedis } from '../src/services/index.js';
import { openEngine, PG_BOSS_SCHEMA, proofWorkflow, STEPS, type PairingName, type ProofConfig } from './common.js';
import { ioredis, kyselyStore, pg } from './deps.js';
import { judgeLedgers, type Kill } from './judge-ledgers.js';
import { crossProcessNow, pairBodies, readLedgers } from './ledger.js';
import { LIMIT, limitedWorkflow, TENANTS } from './limited-workflow.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '500' },
    limited: { type: 'string', default: '24' },
    'limited-ms': { type: 'string', default: '1500' },
    kills: { type: 'string', default: '3' },
    workers: { type: 'string', default: '4' },
    pairing: { type: 'string', default: 'all' },
    strategy: { type: 'string', default: 'per-workflow' },
    'timeout-s': { type: 'string', default: '600' },
  },
});
const RUNS = Number(values.runs);
const LIMITED = Number(values.limited);
const LIMITED_MS = Number(values['limited-ms']);
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
  const ledgerDir = dir;
  let config: ProofConfig;
  let cleanup: () => Promise<void>;
  if (pairing === 'postgres+pg-boss' || pairing === 'postgres+store') {
    // Servers of our own (local binaries), never containers: no container networking in the proof.
    const service = await usePostgres({ provider: 'local' });
    if (service.skipped) throw new Error(`no PostgreSQL: ${service.reason}`);
    const dbUrl = await createPostgresDatabase(service.url);
    config = { pairing, strategy, url: dbUrl, prefix: '', countsFile, ledgerDir, limitedWorkMs: LIMITED_MS };
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
    config = { pairing, strategy, url: service.url, prefix, countsFile, ledgerDir, limitedWorkMs: LIMITED_MS };
    cleanup = async () => {};
  }
  log(`${pairing} (${strategy}): ${RUNS} runs + ${LIMITED} limited, ${WORKERS} workers, ${KILLS} kills`);

  // The driver's own engine only submits runs (no workers).
  const producer = await openEngine(config, 'proof-driver');
  await producer.engine.start({ workers: false });
  const workers: (ChildProcess | undefined)[] = await Promise.all(Array.from({ length: WORKERS }, () => startWorker(config)));
  const started = Date.now();
  const workflow = proofWorkflow(countsFile);
  // The limited runs go first, so they are in flight from the start, when the first kill may land.
  const limited = limitedWorkflow(ledgerDir, LIMITED_MS);
  const limitedRuns = new Map<string, string>();
  for (let i = 0; i < LIMITED; i += 25) {
    const inputs = Array.from({ length: Math.min(25, LIMITED - i) }, (_, j) => ({ tenant: TENANTS[(i + j) % TENANTS.length]!, n: i + j }));
    const batch = await Promise.all(inputs.map((input) => producer.engine.startRun(limited, input)));
    for (const [j, h] of batch.entries()) limitedRuns.set(h.id, inputs[j]!.tenant);
  }
  const ids: string[] = [];
  for (let i = 0; i < RUNS; i += 25) {
    const batch = await Promise.all(Array.from({ length: Math.min(25, RUNS - i) }, (_, j) => producer.engine.startRun(workflow, { n: i + j })));
    ids.push(...batch.map((h) => h.id));
  }
  log(`submitted ${ids.length} + ${limitedRuns.size} runs in ${Date.now() - started} ms`);

  // Kill a live worker when 10%, 30%, 50% ... of the runs are terminal (at least 1.5 s apart),
  // replacing it at once (the replacement starts in the background). Runs executing in parallel
  // end together, in waves, so "terminal" can jump from none to all: a kill also lands once 2.5 s
  // passed without one while runs are still in flight. While limited runs are unfinished, the
  // victim is a worker running a limited body (per its ledger), so the kill takes a slot with it;
  // when none is running one at that moment, the kill waits for the next look.
  const total = RUNS + limitedRuns.size;
  const killAt = Array.from({ length: KILLS }, (_, k) => Math.floor(total * Math.min(0.8, 0.1 + 0.2 * k)));
  let kills = 0;
  let lastKill = 0;
  const killed: Kill[] = [];
  let limitedDoneMs: number | undefined;
  const replacements: Promise<void>[] = [];
  const statuses = new Map<string, string>();
  const pending = new Set([...limitedRuns.keys(), ...ids]);
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
    const done = total - pending.size;
    const due = done >= killAt[kills]! || Date.now() - (lastKill || started) >= 2500;
    const live = workers.map((w, i) => [w, i] as const).filter(([w]) => w !== undefined);
    // The latest start of an open limited body per process: the victim is the process whose body
    // started last, the farthest from its end, so the body cannot end between this read and the
    // kill (a random holder's body once ended 25 ms before its kill).
    const openSince = new Map<number, number>();
    for (const b of pairBodies(readLedgers(ledgerDir)).bodies) {
      if (b.end === undefined) openSince.set(b.pid, Math.max(openSince.get(b.pid) ?? 0, b.start));
    }
    const holders = live.filter(([w]) => openSince.has(w!.pid!)).sort(([a], [b]) => openSince.get(b!.pid!)! - openSince.get(a!.pid!)!);
    const limitedLeft = [...limitedRuns.keys()].some((id) => pending.has(id));
    if (!limitedLeft && limitedDoneMs === undefined) {
      limitedDoneMs = Date.now() - started;
      log(`limited runs all terminal in ${limitedDoneMs} ms`);
    }
    const victims = limitedLeft ? holders : live;
    if (kills < KILLS && pending.size > 0 && due && Date.now() - lastKill >= 1500 && victims.length > 0) {
      const [child, slot] = limitedLeft ? victims[0]! : victims[Math.floor(Math.random() * victims.length)]!;
      killed.push({ pid: child!.pid!, at: crossProcessNow() });
      child!.kill('SIGKILL');
      workers[slot] = undefined;
      kills++;
      lastKill = Date.now();
      log(`kill ${kills}: SIGKILL worker pid ${child!.pid} at ${done}/${total} runs terminal${limitedLeft ? ' (running a limited body)' : ''}`);
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

  // The limited runs: the store's word on which completed (each with its one step succeeded), then
  // the judge, from the ledgers alone.
  const completedLimited = new Set<string>();
  for (const id of limitedRuns.keys()) {
    const run = await producer.store.runs.get(id);
    const steps = await producer.store.steps.load(id);
    if (run?.status === 'completed' && steps.length === 1 && steps[0]!.status === 'succeeded') completedLimited.add(id);
  }
  const verdict = judgeLedgers({ entries: readLedgers(ledgerDir), kills: killed, runs: limitedRuns, completed: completedLimited, limit: LIMIT });
  failures.push(...verdict.failures.slice(0, 10));
  if (LIMITED > 0 && verdict.killsInFlight < KILLS) failures.push(`${verdict.killsInFlight} of ${KILLS} kills landed on a limited body in flight`);
  for (const s of ['pending', 'waiting', 'running']) if (byStatus[s]) failures.push(`${byStatus[s]} runs left ${s}`);
  if (stepProblems > 0) failures.push(`${stepProblems} runs whose steps are not exactly ${STEPS} succeeded`);

  // The queue drains (an orchestrator job may still be finishing as the last run completes).
  let jobs = await queuedJobs(config);
  let drainS = 0;
  for (; jobs > 0 && drainS < 30; drainS++) {
    await sleep(1000);
    jobs = await queuedJobs(config);
  }
  log(`${jobs} jobs left in the queue after ${drainS} s of waiting`);
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

  // A failed proof keeps its files (counts and ledgers) for reading.
  if (failures.length === 0) rmSync(dir, { recursive: true, force: true });
  else failures.push(`files kept in ${dir}`);
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

  const result = failures.length === 0 ? 'pass' : 'FAIL';
  const overlap = TENANTS.map((t) => `${t} ${verdict.maxOverlap[t] ?? 0}`).join(', ');
  const gaps = `${(verdict.maxGapMs.afterEnd / 1000).toFixed(2)} s / ${(verdict.maxGapMs.afterKill / 1000).toFixed(2)} s`;
  const line = `| ${pairing} | ${strategy} | ${RUNS} | ${expected} | ${WORKERS} | ${kills} | ${lines.length} | ${reExecuted} (max ${maxPer}× one step) | ${retriedSteps} | ${(wallMs / 1000).toFixed(1)} s | ${jobs} | ${limitedRuns.size} | ${overlap} | ${verdict.revoked} (${verdict.maxOverlapWithRevoked}) | ${verdict.killsInFlight} (${verdict.cut} bodies cut) | ${verdict.doubled} | ${gaps} | ${result} |`;
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
console.log(
  `| pairing | strategy | runs | steps | workers | SIGKILLs | step bodies run | re-executed bodies | steps with attempt > 1 | wall time | jobs left | limited runs (limit ${LIMIT} per tenant) | most in flight per tenant | revoked bodies (most in flight with them) | kills cutting limited bodies | bodies doubling a run in flight | largest slot-free → next start (after an end / after a kill) | result |`,
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const o of outcomes) console.log(o.line);
for (const o of outcomes) for (const f of o.failures) console.log(`FAIL ${o.pairing}: ${f}`);
process.exit(outcomes.every((o) => o.failures.length === 0) ? 0 : 1);
