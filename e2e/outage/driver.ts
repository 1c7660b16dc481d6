/**
 * The outage test's driver: two worker processes over one database, a server restart (the
 * service's `halt()`, a few seconds down, `resume()`) under load, then checks from the store.
 * Used by e2e/test/outage-restart.test.ts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord, StepRecord } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { createMysqlDatabase, createPostgresDatabase, freshRedisPrefix, type RunningService } from '../src/services/index.js';
import { kysely, kyselyMysql, kyselyPostgres, kyselyStore, mysql2, pg } from '../proof/deps.js';
import { expectedOutput, openEngine, openStore, outageWorkflow, PG_BOSS_SCHEMA, STEPS, type OutageBackend, type OutageConfig } from './common.js';

/** A body success this long before the halt may still have its result's write in flight then. */
const LOST_WRITE_LEAD_MS = 1000;
/** After the server is back, pools reconnect and a write can still fail on a dead connection. */
const LOST_WRITE_GRACE_MS = 5000;

export interface OutageReport {
  /** Worker processes that exited before the driver stopped them, with their exit and stderr tail. */
  died: string[];
  runs: number;
  completed: number;
  wrongOutput: string[];
  /** Steps not recorded exactly once as succeeded. */
  badSteps: string[];
  /** (run, step) pairs whose body succeeded more often than the history has interrupted attempts to explain. */
  unexplainedReruns: string[];
  /** Step bodies that succeeded more than once, each explained by an interrupted attempt. */
  explainedReruns: number;
  /** Output lines of each worker (what a user's logs would hold). */
  logLines: number[];
  /** Log entries of each worker: lines starting with a `[label]` (`[cairn]`, `[cairn/queue-pg-boss]`, `[ioredis]`). */
  logEntries: number[];
  logSample: string;
  /** The last lines of each worker's output: what it was doing when the driver stopped it. */
  logTail: string;
  /** Runs not completed when the driver gave up, as the store has them (a few, with their steps). */
  unfinished: string[];
  downMs: number;
  wallMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Worker {
  child: ChildProcess;
  stderr: string[];
  exit?: string;
}

function startWorker(config: OutageConfig): Promise<Worker> {
  const child = fork(new URL('./worker.ts', import.meta.url), {
    execArgv: ['--import', 'tsx', '--conditions=@cairn/source'],
    env: { ...process.env, CAIRN_OUTAGE_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const worker: Worker = { child, stderr: [] };
  const collect = (d: Buffer) => worker.stderr.push(...d.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  child.on('exit', (code, signal) => (worker.exit = `exit code ${code}, signal ${signal}`));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('worker did not start in 60 s')), 60_000);
    child.once('message', () => {
      clearTimeout(timer);
      resolve(worker);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited early (${code}): ${worker.stderr.slice(-20).join('\n')}`));
    });
  });
}

async function stopWorker(worker: Worker): Promise<void> {
  const child = worker.child;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.send({ stop: true });
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** A fresh database (or key prefix) on the server, with Cairn's tables. */
export async function prepare(backend: OutageBackend, service: RunningService, countsFile: string): Promise<OutageConfig> {
  if (backend === 'redis') return { backend, url: service.url, prefix: freshRedisPrefix(), countsFile };
  // Guarded like every pool here: a connection still closing when the test halts the server
  // receives its shutdown notice, which would otherwise be an uncaught 'error'.
  const { migrateToLatest } = await kyselyStore();
  const { guardPostgresPool } = await kyselyPostgres();
  const { guardMysqlPool } = await kyselyMysql();
  const k = await kysely();
  if (backend === 'postgres') {
    const url = await createPostgresDatabase(service.url);
    const { default: pgm } = await pg();
    const db = new k.Kysely({ dialect: new k.PostgresDialect({ pool: guardPostgresPool(new pgm.Pool({ connectionString: url, max: 1 })) }) });
    await migrateToLatest(db);
    await db.destroy();
    return { backend, url, prefix: '', countsFile };
  }
  const url = await createMysqlDatabase(service.url);
  const { createPool } = await mysql2();
  const db = new k.Kysely({ dialect: new k.MysqlDialect({ pool: guardMysqlPool(createPool({ uri: url, connectionLimit: 1 })) }) });
  await migrateToLatest(db);
  await db.destroy();
  return { backend, url, prefix: '', countsFile };
}

async function countTerminal(store: WorkflowStore, ids: string[]): Promise<number> {
  let n = 0;
  for (const id of ids) {
    const run = await store.runs.get(id);
    if (run && (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled')) n++;
  }
  return n;
}

/** The pg-boss jobs of the outage's queues by state, when runs were left unfinished (where do they wait?). */
async function pgBossJobStates(url: string): Promise<string> {
  const { default: pgm } = await pg();
  const client = new pgm.Client({ connectionString: url });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query(`select name, state, count(*)::int as n from ${PG_BOSS_SCHEMA}.job group by 1, 2 order by 1, 2`);
    return `pg-boss jobs: ${rows.map((r: { name: string; state: string; n: number }) => `${r.name} ${r.state} ${r.n}`).join('; ')}`;
  } catch (error) {
    return `pg-boss jobs: not read (${String(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A run the workers did not finish, as the store has it: status, lease, wake and steps (times from the start). */
function describeUnfinished(id: string, run: RunRecord | undefined, steps: StepRecord[], started: number): string {
  if (!run) return `${id}: not in the store`;
  const at = (t: number | undefined) => (t === undefined ? '-' : `${t - started} ms`);
  const lease = run.lease ? `${run.lease.owner} until ${at(run.lease.expiresAt)}` : 'none';
  const recorded = steps.map((step) => `${step.key} ${step.status}#${step.attempt}`).join(', ');
  return `${id}: ${run.status}, fence ${run.fence}, lease ${lease}, wakeAt ${at(run.wakeAt)}, updated ${at(run.updatedAt)}, steps [${recorded}]`;
}

/**
 * Runs `runs` runs over two worker processes; when `restartAt` of them are terminal, halts the
 * server, keeps it down `downMs`, and starts it again. Resolves with what was found.
 */
export async function runOutage(
  backend: OutageBackend,
  service: RunningService,
  o: { runs: number; restartAt: number; downMs: number; timeoutMs: number },
): Promise<OutageReport> {
  if (!service.halt || !service.resume) throw new Error(`${backend}: the server cannot be restarted (source ${service.source})`);
  const dir = mkdtempSync(join(tmpdir(), 'cairn-outage-'));
  const countsFile = join(dir, 'counts.tsv');
  writeFileSync(countsFile, '');
  const config = await prepare(backend, service, countsFile);
  const workers = await Promise.all([startWorker(config), startWorker(config)]);
  const started = Date.now();
  const report: OutageReport = {
    died: [],
    runs: o.runs,
    completed: 0,
    wrongOutput: [],
    badSteps: [],
    unexplainedReruns: [],
    explainedReruns: 0,
    logLines: [],
    logEntries: [],
    logSample: '',
    logTail: '',
    unfinished: [],
    downMs: 0,
    wallMs: 0,
  };
  try {
    // The driver submits the runs and watches them, but is closed during the outage: only the
    // workers are under test.
    const producer = await openEngine(config, 'outage-driver', { logger: { warn: () => {}, error: () => {} }, submitOnly: true });
    await producer.engine.start({ workers: false });
    const workflow = outageWorkflow(countsFile);
    const ids: string[] = [];
    for (let i = 0; i < o.runs; i++) ids.push((await producer.engine.startRun(workflow, { n: i })).id);
    const inputOf = new Map(ids.map((id, i) => [id, i]));
    while ((await countTerminal(producer.store, ids)) < o.restartAt && Date.now() - started < o.timeoutMs) await sleep(100);
    await producer.close();

    const down = Date.now();
    await service.halt();
    await sleep(o.downMs);
    await service.resume();
    report.downMs = Date.now() - down;

    const s = await openStore(config);
    try {
      while (Date.now() - started < o.timeoutMs && workers.every((w) => w.exit === undefined)) {
        if ((await countTerminal(s.store, ids).catch(() => 0)) === ids.length) break;
        await sleep(250);
      }
      report.wallMs = Date.now() - started;
      // When each body succeeded, per (run, step), in order.
      const successes = new Map<string, number[]>();
      for (const line of readFileSync(countsFile, 'utf8').split('\n').filter(Boolean)) {
        const [id, key, at] = line.split('\t');
        const k = `${id}\t${key}`;
        successes.set(k, [...(successes.get(k) ?? []), Number(at)]);
      }
      // An inline step is recorded by one write after its body (decision 33): a body that
      // succeeded just before or during the outage, or while the workers reconnected, can lose that
      // write and leave no attempt record; its step then runs again. Such a success (never the
      // last one, which is the recorded one) explains one re-run, as an interrupted attempt does.
      const resumedAt = down + report.downMs;
      const mayHaveLostItsWrite = (at: number) => at >= down - LOST_WRITE_LEAD_MS && at <= resumedAt + LOST_WRITE_GRACE_MS;
      for (const id of ids) {
        const run = await s.store.runs.get(id);
        const steps = await s.store.steps.load(id);
        if (run?.status === 'completed') report.completed++;
        else if (report.unfinished.length < 5) report.unfinished.push(describeUnfinished(id, run, steps, started));
        if (run?.status === 'completed' && run.output !== expectedOutput(inputOf.get(id)!)) report.wrongOutput.push(`${id}: ${JSON.stringify(run.output)}`);
        const attempts = await s.store.history.list(id);
        for (let i = 0; i < STEPS; i++) {
          const key = `s${i}`;
          const recorded = steps.filter((step) => step.key === key);
          if (run?.status === 'completed' && (recorded.length !== 1 || recorded[0]!.status !== 'succeeded'))
            report.badSteps.push(`${id}/${key}: ${JSON.stringify(recorded.map((r) => r.status))}`);
          const times = (successes.get(`${id}\t${key}`) ?? []).sort((a, b) => a - b);
          const bodies = times.length;
          const lostWrites = times.slice(0, -1).filter(mayHaveLostItsWrite).length;
          const ofStep = attempts.filter((a) => a.stepKey === key);
          const succeeded = ofStep.filter((a) => a.status === 'succeeded').length;
          const interrupted = ofStep.length - succeeded;
          if (run?.status === 'completed' && succeeded !== 1) report.badSteps.push(`${id}/${key}: ${succeeded} succeeded attempts`);
          // A body succeeds again only after an attempt whose result was never recorded.
          if (bodies > 1 + interrupted + lostWrites) {
            report.unexplainedReruns.push(
              `${id}/${key}: body succeeded ${bodies}x (at ${times.map((t) => t - down).join(', ')} ms from the halt), attempts ${JSON.stringify(ofStep.map((a) => a.status))}`,
            );
          } else if (bodies > 1) report.explainedReruns += bodies - 1;
        }
      }
      if (backend === 'postgres' && report.completed < ids.length) report.unfinished.push(await pgBossJobStates(config.url));
    } finally {
      await s.close();
    }
  } finally {
    for (const w of workers) if (w.exit !== undefined) report.died.push(`${w.exit}:\n${w.stderr.slice(-15).join('\n')}`);
    await Promise.all(workers.map(stopWorker));
    report.logLines = workers.map((w) => w.stderr.length);
    report.logEntries = workers.map((w) => w.stderr.filter((line) => line.startsWith('[')).length);
    // CAIRN_OUTAGE_LOG_DIR=dir keeps each worker's output, to read what a user's logs would hold.
    const logDir = process.env.CAIRN_OUTAGE_LOG_DIR;
    if (logDir) {
      for (const [i, w] of workers.entries()) writeFileSync(join(logDir, `${backend}-worker-${i + 1}.log`), w.stderr.join('\n'));
    }
    report.logSample = workers.flatMap((w) => w.stderr.slice(0, 15)).join('\n');
    report.logTail = workers.map((w, i) => `worker ${i + 1}:\n${w.stderr.slice(-25).join('\n')}`).join('\n');
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}
