import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine } from '@cairn/core';
import { createDispatcher, createHttpHandler, signPush, toNodeListener } from '@cairn/http';
import type { BackendInstance } from '../backends/types.js';
import { nowMs, percentile } from '../stats.js';
import { benchEngine, stepsWorkflow } from './workflows.js';

export interface ServerlessOptions {
  /** Pushes of a one-step run measured (after `warmup` more), each beside the same unit executed directly. */
  pushes: number;
  warmup: number;
  /** Steps of the run taken through the dispatcher and through a long-lived worker. */
  runSteps: number;
  /** Runs of each kind, alternating, after `runWarmup` warm-up runs of each. */
  runSamples: number;
  runWarmup: number;
}

export interface ServerlessResult {
  pushes: number;
  /**
   * Server time of a push: the node:http listener called → the answer written (body read, signature
   * checked, the unit executed, the answer serialised), ms, p50.
   */
  pushServerP50Ms: number;
  /** The same unit (a one-step run) executed directly with `engine.pushed.executeOnce`, ms, p50. */
  directP50Ms: number;
  /** `pushServerP50Ms - directP50Ms`: what the handler adds beyond the work (target ≤ 2 ms). */
  handlerOverheadMs: number;
  runSteps: number;
  runSamples: number;
  /** `startRun` → `result()` of a `runSteps`-step run executed by a long-lived worker engine, ms, p50. */
  workerRunP50Ms: number;
  /** The same run pushed by a dispatcher to the handler over HTTP, ms, p50. */
  dispatchedRunP50Ms: number;
  /** HTTP pushes the dispatcher made per measured run (one push runs the whole run within the budget: 1, counted). */
  dispatchedPushesPerRun: number;
  /** `dispatchedRunP50Ms / workerRunP50Ms` (target ≤ 2). */
  ratio: number;
}

const SECRET = 'bench-serverless-secret-0123456789';

async function listen(listener: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/cairn` };
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * The serverless handler (issue 35), two figures side by side in one run:
 * - what the push handler adds to a push beyond its work: a one-step run pushed over real HTTP
 *   (server time at the node:http listener) against the same unit executed directly, alternating;
 * - a `runSteps`-step run started by the application and completed through a dispatcher pushing to
 *   the handler over HTTP, against the same run on a long-lived worker engine, alternating. Each
 *   side has its own store connections (application, worker or handler, dispatcher).
 */
export async function serverless(backend: BackendInstance, options: ServerlessOptions): Promise<ServerlessResult> {
  const opened = await backend.openStore();
  const handlerStore = await opened.peer();
  const appStore = await opened.peer();
  const handlerEngine = benchEngine(handlerStore, { recovering: true }); // never started: the pushes run the work
  const app: Engine = benchEngine(appStore);
  await app.start({ workers: false });
  const serverTimes: number[] = [];
  const handler = toNodeListener(createHttpHandler(handlerEngine, { secrets: SECRET, maxDurationMs: 30_000 }));
  const { server, url } = await listen((req, res) => {
    const started = nowMs();
    res.once('finish', () => serverTimes.push(nowMs() - started));
    handler(req, res);
  });
  try {
    // 1. The handler's own cost per push.
    const direct: number[] = [];
    const pushed: number[] = [];
    const runDirect = async () => {
      const run = await app.startRun(stepsWorkflow, 1);
      const t0 = nowMs();
      const executed = await handlerEngine.pushed.executeOnce(run.id, { deadline: Date.now() + 30_000 });
      if (executed.status !== 'completed') throw new Error(`direct execution: ${executed.status}`);
      return nowMs() - t0;
    };
    const runPushed = async () => {
      const run = await app.startRun(stepsWorkflow, 1);
      const body = JSON.stringify({ kind: 'run', runId: run.id });
      const before = serverTimes.length;
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signPush(body, SECRET) }, body });
      const answer = (await response.json()) as { status?: string };
      if (answer.status !== 'completed') throw new Error(`push: ${response.status} ${JSON.stringify(answer)}`);
      // 'finish' fires before the client reads the answer, but let it land for certain.
      while (serverTimes.length === before) await new Promise((resolve) => setImmediate(resolve));
      return serverTimes.at(-1) as number;
    };
    for (let i = 0; i < options.warmup + options.pushes; i++) {
      // Side by side, the order alternating so that neither always runs first.
      let directMs: number;
      let pushedMs: number;
      if (i % 2 === 0) {
        directMs = await runDirect();
        pushedMs = await runPushed();
      } else {
        pushedMs = await runPushed();
        directMs = await runDirect();
      }
      if (i >= options.warmup) {
        direct.push(directMs);
        pushed.push(pushedMs);
      }
    }

    // 2. A long run through the dispatcher, beside a long-lived worker.
    const workerStore = await opened.peer();
    const dispatcherStore = await opened.peer();
    const workerRuns: number[] = [];
    const dispatchedRuns: number[] = [];
    let dispatchedPushes = 0;
    const time = async (into: number[] | undefined) => {
      const t0 = nowMs();
      const run = await app.startRun(stepsWorkflow, options.runSteps);
      if ((await app.result(run.id, { timeout: '120s' })) !== options.runSteps) throw new Error('the run returned something else');
      into?.push(nowMs() - t0);
    };
    try {
      for (let i = -options.runWarmup; i < options.runSamples; i++) {
        // One side runs at a time: a worker only for its sample, a dispatcher only for its.
        const worker = benchEngine(workerStore, { recovering: true });
        await worker.start();
        try {
          await time(i >= 0 ? workerRuns : undefined);
        } finally {
          await worker.stop();
        }
        const dispatcher = createDispatcher({ store: dispatcherStore, target: url, secrets: SECRET, pollIntervalMs: 1000 });
        await dispatcher.start();
        try {
          await time(i >= 0 ? dispatchedRuns : undefined);
        } finally {
          await dispatcher.stop();
        }
        if (i >= 0) dispatchedPushes += dispatcher.pushes;
      }
    } finally {
      await workerStore.close();
      await dispatcherStore.close();
    }
    const pushServerP50Ms = percentile(pushed, 50);
    const directP50Ms = percentile(direct, 50);
    const workerRunP50Ms = percentile(workerRuns, 50);
    const dispatchedRunP50Ms = percentile(dispatchedRuns, 50);
    return {
      pushes: pushed.length,
      pushServerP50Ms,
      directP50Ms,
      handlerOverheadMs: pushServerP50Ms - directP50Ms,
      runSteps: options.runSteps,
      runSamples: workerRuns.length,
      workerRunP50Ms,
      dispatchedRunP50Ms,
      dispatchedPushesPerRun: dispatchedPushes / dispatchedRuns.length,
      ratio: dispatchedRunP50Ms / workerRunP50Ms,
    };
  } finally {
    await close(server);
    await app.stop();
    await appStore.close();
    await handlerStore.close();
    await opened.close();
  }
}
