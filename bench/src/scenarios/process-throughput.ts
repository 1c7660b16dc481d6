import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BackendInstance } from '../backends/types.js';
import type { QueueAdapter } from '../queues/types.js';
import { sleep } from '../stats.js';
import { benchEngine, queuedWorkflow } from './workflows.js';
import type { WorkerConfig } from '../workers/worker-config.js';

export interface ProcessThroughputResult {
  queue: string;
  store: string;
  runs: number;
  stepsPerRun: number;
  concurrency: number;
  byWorkers: WorkerCountResult[];
  /** How long the idle window of each round lasted (requests then are divided by it). */
  idleSeconds: number;
}

/** One round: N worker processes. Requests are counted by the server, from every process. */
export interface WorkerCountResult {
  workers: number;
  runsPerSecond: number;
  seconds: number;
  /** Server requests (PostgreSQL statements, Redis commands) from submit to the last result, per run. */
  requestsPerRun: number;
  /**
   * `requestsPerRun` less what the same processes cost while idle over as long (idle requests per
   * second × the busy seconds): the requests the runs caused. Time-driven polling (each engine's
   * recovery pass, the queue's idle poll) grows with processes × seconds, and a loaded machine
   * stretches the seconds, so this is the figure that must stay flat as processes are added.
   */
  netRequestsPerRun: number;
  /** The most frequent requests of that window, per run. */
  topPerRun: { request: string; perRun: number }[];
  /** Requests per second with every engine idle (workers started, nothing to do). */
  idleRequestsPerSecond: number;
  /** The most frequent idle requests, per second. */
  idleTop: { request: string; perSecond: number }[];
}

export interface ProcessThroughputOptions {
  runs: number;
  steps: number;
  concurrency: number;
  workers: readonly number[];
  /** The idle window after each round, in milliseconds. */
  idleMs: number;
}

const WORKER = fileURLToPath(new URL('../workers/worker-process.ts', import.meta.url));

/** Forks a worker process and resolves once its engine has started. */
export function startWorker(config: WorkerConfig): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = fork(WORKER, [JSON.stringify(config)], {
      execArgv: ['--import', 'tsx', '--conditions=@cairn/source'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const onExit = (code: number | null) => reject(new Error(`worker exited with ${code} before it was ready`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      if ((message as { ready?: boolean }).ready) resolve(child);
      else reject(new Error(`worker failed: ${JSON.stringify(message)}`));
    });
  });
}

/** Asks a worker process to stop (SIGKILL after 15 s) and resolves when it exited. */
export function stopWorker(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.send({ stop: true });
  });
}

/**
 * Runs per second with 1, 2, 4 real worker processes (`child_process.fork`), each an engine with
 * orchestrator and step workers on the distributed queue. This process only submits (a client
 * engine, no workers) and reads the completion times the workers recorded (`updatedAt`).
 */
export async function processThroughput(
  backend: BackendInstance,
  queue: QueueAdapter,
  url: string,
  options: ProcessThroughputOptions,
): Promise<ProcessThroughputResult> {
  const byWorkers: ProcessThroughputResult['byWorkers'] = [];
  // One set of queue names for every round (each round's jobs have all finished before the next
  // starts). A set per round made the queue's schema grow by 14 queues a round, and pg-boss's first
  // retention pass over every queue it has never maintained (a few statements per queue, once a day
  // per queue for the whole fleet) landed in whichever round outlived its 60 s supervise timer.
  const queuePrefix = `b${process.pid}x-`;
  for (const workers of options.workers) {
    const opened = await backend.openStore();
    if (!opened.spec) throw new Error(`${backend.title}: no store spec for worker processes`);
    const config: WorkerConfig = { store: opened.spec, queue: queue.name, queueUrl: url, concurrency: options.concurrency, queuePrefix };
    const children: ChildProcess[] = [];
    const q = await queue.create(url);
    const client = benchEngine(await opened.peer(), { queue: q, queuePrefix, pollIntervalMs: 200 });
    const counter = await queue.openRequestCounter(url);
    try {
      // One after another: the first worker to start creates the queue's tables or keys.
      for (let i = 0; i < workers; i++) children.push(await startWorker(config));
      await client.start({ workers: false });
      await counter.reset();
      const t0 = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < options.runs; i++) ids.push((await client.startRun(queuedWorkflow, { steps: options.steps })).id);
      for (const id of ids) await client.result(id, { timeout: '10m' });
      let last = 0;
      for (const id of ids) last = Math.max(last, (await client.getRun(id))?.updatedAt ?? 0);
      const seconds = (last - t0) / 1000;
      const busy = await counter.read();
      // Nothing left to do: what every engine and queue client costs the server while idle.
      await counter.reset();
      await sleep(options.idleMs);
      const idle = await counter.read();
      const perSecond = 1000 / options.idleMs;
      const idleRate = idle.total * perSecond;
      byWorkers.push({
        workers,
        runsPerSecond: options.runs / seconds,
        seconds,
        requestsPerRun: busy.total / options.runs,
        netRequestsPerRun: Math.max(0, busy.total - idleRate * seconds) / options.runs,
        topPerRun: busy.top.map((t) => ({ request: t.request, perRun: t.count / options.runs })),
        idleRequestsPerSecond: idleRate,
        idleTop: idle.top.map((t) => ({ request: t.request, perSecond: t.count * perSecond })),
      });
    } finally {
      await counter.close();
      await Promise.all(children.map(stopWorker));
      await client.stop();
      await q.close();
      await opened.close();
    }
  }
  return {
    queue: queue.name,
    store: backend.title,
    runs: options.runs,
    stepsPerRun: options.steps,
    concurrency: options.concurrency,
    byWorkers,
    idleSeconds: options.idleMs / 1000,
  };
}
