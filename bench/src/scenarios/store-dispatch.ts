import type { ChildProcess } from 'node:child_process';
import type { BackendInstance } from '../backends/types.js';
import { openPostgresRequestCounter } from '../queues/postgres-request-counter.js';
import { openRedisRequestCounter } from '../queues/redis-request-counter.js';
import type { RequestCounter } from '../queues/request-counter.js';
import { percentile, sleep } from '../stats.js';
import type { WorkerConfig } from '../workers/worker-config.js';
import { startWorker } from './process-throughput.js';
import { benchEngine, eventPickupWorkflow, pickupWorkflow } from './workflows.js';

/** One round: N worker processes on the local queue, one client process (this one) without workers. */
export interface StoreDispatchRound {
  workers: number;
  /** Start → the run's first step running on a worker process, p50 / p90 (sequential runs). */
  pickupP50Ms: number;
  pickupP90Ms: number;
  /** sendEvent → the step after the wait running on a worker process, p50. */
  eventP50Ms: number;
  /** Server requests per run (start, signal, claims, the run, the client's result() polls). */
  requestsPerRun: number;
  topPerRun: { request: string; perRun: number }[];
  /**
   * Claims the worker processes made per execution the runs needed (one per run, two per event
   * run), and those that lost the race to another worker (wasted: one statement or command each).
   */
  claimsPerExecution: number;
  lostClaimsPerExecution: number;
  /** Requests per second with every engine idle (N workers + the client). */
  idleRequestsPerSecond: number;
  idleTop: { request: string; perSecond: number }[];
}

export interface StoreDispatchResult {
  store: string;
  /** How a run started by the client reaches a worker: LISTEN/NOTIFY, pub/sub. */
  mechanism: string;
  runs: number;
  idleSeconds: number;
  byWorkers: StoreDispatchRound[];
}

export interface StoreDispatchOptions {
  runs: number;
  workers: readonly number[];
  idleMs: number;
}

const COUNTERS: Partial<Record<BackendInstance['name'], { mechanism: string; open: (url: string) => Promise<RequestCounter> }>> = {
  postgres: { mechanism: 'LISTEN/NOTIFY', open: openPostgresRequestCounter },
  redis: { mechanism: 'pub/sub', open: openRedisRequestCounter },
};

/** Stops a worker process and resolves with the claims it reported. */
function stopCounting(child: ChildProcess): Promise<{ made: number; lost: number }> {
  return new Promise((resolve) => {
    let claims = { made: 0, lost: 0 };
    if (child.exitCode !== null) return resolve(claims);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('message', (message) => {
      const reported = (message as { claims?: { made: number; lost: number } }).claims;
      if (reported) claims = reported;
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(claims);
    });
    child.send({ stop: true });
  });
}

/**
 * The store as the queue between processes (decision 34): worker processes on the engine's own
 * local queue, and this process as a client (`start({ workers: false })`) that starts runs and
 * sends events. Pickup times compare the worker's clock with this process's (one machine).
 * Requests are counted by the server, from every process.
 */
export async function storeDispatch(backend: BackendInstance, url: string, options: StoreDispatchOptions): Promise<StoreDispatchResult> {
  const counting = COUNTERS[backend.name];
  if (!counting) throw new Error(`${backend.title}: no server-side request counter`);
  const byWorkers: StoreDispatchRound[] = [];
  for (const workers of options.workers) {
    const opened = await backend.openStore();
    if (!opened.spec) throw new Error(`${backend.title}: no store spec for worker processes`);
    const config: WorkerConfig = { store: opened.spec, queue: 'local', queueUrl: url, concurrency: 10, queuePrefix: '' };
    const children: ChildProcess[] = [];
    const peer = await opened.peer();
    if (!peer.signals) throw new Error(`${backend.title}: the client store has no signals`);
    const client = benchEngine(peer, { pollIntervalMs: 50 });
    const counter = await counting.open(url);
    let claims = { made: 0, lost: 0 };
    try {
      for (let i = 0; i < workers; i++) children.push(await startWorker(config));
      await client.start({ workers: false });
      // Warm-up: connections, prepared scripts.
      for (let i = 0; i < 3; i++) await client.result((await client.startRun(pickupWorkflow, null)).id, { timeout: '30s' });

      await counter.reset();
      const pickups: number[] = [];
      for (let i = 0; i < options.runs; i++) {
        const t0 = Date.now();
        const handle = await client.startRun(pickupWorkflow, null);
        pickups.push(((await client.result(handle.id, { timeout: '30s' })) as number) - t0);
      }
      const busy = await counter.read();

      const events: number[] = [];
      for (let i = 0; i < Math.min(options.runs, 20); i++) {
        const handle = await client.startRun(eventPickupWorkflow, null);
        for (let tries = 0; tries < 3000; tries++) {
          const steps = await peer.steps.load(handle.id);
          if ((await peer.runs.get(handle.id))?.status === 'waiting' && steps.some((s) => s.key === 'event:go')) break;
          await sleep(2);
        }
        const t0 = Date.now();
        await client.sendEvent(handle.id, 'go');
        events.push(((await client.result(handle.id, { timeout: '30s' })) as number) - t0);
      }

      await counter.reset();
      await sleep(options.idleMs);
      const idle = await counter.read();
      const perSecond = 1000 / options.idleMs;
      for (const child of children.splice(0)) {
        const c = await stopCounting(child);
        claims = { made: claims.made + c.made, lost: claims.lost + c.lost };
      }
      // Claims were counted over every phase: warm-up and pickup runs execute once, event runs twice.
      const executions = 3 + options.runs + 2 * events.length;
      byWorkers.push({
        workers,
        pickupP50Ms: percentile(pickups, 50),
        pickupP90Ms: percentile(pickups, 90),
        eventP50Ms: percentile(events, 50),
        requestsPerRun: busy.total / options.runs,
        topPerRun: busy.top.map((t) => ({ request: t.request, perRun: t.count / options.runs })),
        claimsPerExecution: claims.made / executions,
        lostClaimsPerExecution: claims.lost / executions,
        idleRequestsPerSecond: idle.total * perSecond,
        idleTop: idle.top.map((t) => ({ request: t.request, perSecond: t.count * perSecond })),
      });
    } finally {
      await Promise.all(children.map(stopCounting));
      await client.stop();
      await counter.close();
      await opened.close();
    }
  }
  return { store: backend.title, mechanism: counting.mechanism, runs: options.runs, idleSeconds: options.idleMs / 1000, byWorkers };
}
