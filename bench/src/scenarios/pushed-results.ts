import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { isTerminalRunStatus, type Engine, type RunRecord } from '@cairn/core';
import { countingStore, type CountingStore, type WorkflowStore } from '@cairn/core/backend';
import type { BackendInstance } from '../backends/types.js';
import { percentile, sleep } from '../stats.js';
import type { WorkerConfig } from '../workers/worker-config.js';
import { startWorker, stopWorker } from './process-throughput.js';
import { benchEngine, latencyWorkflow } from './workflows.js';

/** One way of waiting: over the store's signals, or polling (the store seen without them, as before). */
export interface ResultWaitFigures {
  /** The run's completing write returning in the worker process → `result()` resolving in this process, ms (one machine, one clock). */
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Store reads (`runs.get`) per `result()`. */
  readsPerResult: number;
  /**
   * Reads per `result()` that found the run not ended, beyond the waiter's first look: polls (or a
   * hint that came early). Signals healthy: 0.
   */
  pollingReadsPerResult: number;
}

export interface PushedResultsResult {
  store: string;
  /** The push channel: LISTEN/NOTIFY, pub/sub. */
  mechanism: string;
  /** Sequential samples per way of waiting (alternating, side by side). */
  samples: number;
  /** Runs waited for at once in the concurrent part, per way of waiting. */
  concurrent: number;
  pushed: ResultWaitFigures;
  polled: ResultWaitFigures;
  pushedConcurrent: ResultWaitFigures;
  polledConcurrent: ResultWaitFigures;
}

export interface PushedResultsOptions {
  samples: number;
  concurrent: number;
  /** Each run's step takes minWorkMs + a pseudo-random 0..spreadWorkMs, so completions land anywhere in a poll interval. */
  minWorkMs: number;
  spreadWorkMs: number;
  warmup: number;
}

const MECHANISMS: Partial<Record<BackendInstance['name'], string>> = { postgres: 'LISTEN/NOTIFY', redis: 'pub/sub' };

/** A small deterministic PRNG, so every backend sees the same work times. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** One waiter: an engine that only calls result(), over its own store instance, counted. */
interface Waiter {
  engine: Engine;
  counted: CountingStore;
}

/** The runs one way of waiting waited for, with the lag of each. */
interface Sampled {
  runs: string[];
  lags: number[];
}

function waiter(store: WorkflowStore, signals: boolean): Waiter {
  const counted = countingStore(store, signals ? {} : { without: ['signals'] });
  return { engine: benchEngine(counted), counted };
}

function figures(w: Waiter, sampled: Sampled): ResultWaitFigures {
  let reads = 0;
  let polling = 0;
  for (const id of sampled.runs) {
    const got = w.counted.calls.filter((c) => c.method === 'runs.get' && c.runId === id);
    reads += got.length;
    const unended = got.filter((c) => c.outcome?.ok === true && !isTerminalRunStatus((c.outcome.value as RunRecord | undefined)?.status ?? 'completed')).length;
    polling += Math.max(0, unended - 1);
  }
  return {
    p50Ms: percentile(sampled.lags, 50),
    p95Ms: percentile(sampled.lags, 95),
    maxMs: Math.max(...sampled.lags),
    readsPerResult: reads / sampled.runs.length,
    pollingReadsPerResult: polling / sampled.runs.length,
  };
}

/**
 * `result()` of a run executing in another process (issue 30, part 4): one worker process (the
 * engine's local queue, runs reaching it through the store's signals) executes every run; in this
 * process a client without workers starts them, and two waiter engines, each over its own store
 * instance, call `result()`: one over the store's signals (resolving on the completion signal),
 * one over the same store seen without signals (polling, 10 ms doubling to 1 s: how every
 * cross-process `result()` waited before). They alternate run by run, side by side; then each
 * waits for `concurrent` runs at once. The lag is from the completing write to `result()`
 * resolving: the worker reports when its write returned (`reportEnds`), on this machine's clock.
 */
export async function pushedResults(backend: BackendInstance, url: string, options: PushedResultsOptions): Promise<PushedResultsResult> {
  const mechanism = MECHANISMS[backend.name];
  if (!mechanism) throw new Error(`${backend.title}: no push channel to measure`);
  const opened = await backend.openStore();
  if (!opened.spec) throw new Error(`${backend.title}: no store spec for the worker process`);
  const config: WorkerConfig = { store: opened.spec, queue: 'local', queueUrl: url, concurrency: 64, queuePrefix: '', reportEnds: true };
  const reader = await opened.peer();
  const starterStore = await opened.peer();
  if (!starterStore.signals) throw new Error(`${backend.title}: the client store has no signals`);
  const starter = benchEngine(starterStore);
  const pushed = waiter(await opened.peer(), true);
  const polled = waiter(await opened.peer(), false);
  let child: ChildProcess | undefined;
  const random = prng(30);
  const work = () => options.minWorkMs + Math.round(random() * options.spreadWorkMs);
  // When each run's completing write returned in the worker process (its report comes over IPC,
  // outside the measured path).
  const ends = new Map<string, number>();
  const lagOf = async (id: string, resolvedAt: number) => {
    const run = await reader.runs.get(id);
    if (run?.status !== 'completed') throw new Error(`run ${id} resolved as ${run?.status}`);
    for (let i = 0; i < 5000 && !ends.has(id); i++) await sleep(1);
    const ended = ends.get(id);
    if (ended === undefined) throw new Error(`run ${id}: the worker never reported its end`);
    return resolvedAt - ended;
  };
  const now = () => performance.timeOrigin + performance.now();
  try {
    child = await startWorker(config);
    child.on('message', (message) => {
      const ended = (message as { ended?: [string, number] }).ended;
      if (ended) ends.set(ended[0], ended[1]);
    });
    await starter.start({ workers: false });
    // Warm-up: connections, prepared statements and scripts, the listeners.
    for (let i = 0; i < options.warmup; i++) {
      for (const w of [pushed, polled]) await w.engine.result((await starter.startRun(latencyWorkflow, 1)).id, { timeout: '30s' });
    }
    const seqPushed: Sampled = { runs: [], lags: [] };
    const seqPolled: Sampled = { runs: [], lags: [] };
    const sequential = async (w: Waiter, into: Sampled) => {
      const { id } = await starter.startRun(latencyWorkflow, work());
      await w.engine.result(id, { timeout: '30s' });
      const resolvedAt = now();
      into.runs.push(id);
      into.lags.push(await lagOf(id, resolvedAt));
    };
    for (let i = 0; i < options.samples; i++) {
      // Alternating which goes first, so neither always follows the other.
      if (i % 2 === 0) {
        await sequential(pushed, seqPushed);
        await sequential(polled, seqPolled);
      } else {
        await sequential(polled, seqPolled);
        await sequential(pushed, seqPushed);
      }
    }
    // `concurrent` runs started one after the other, each waited for at once (result() called
    // right after its start), all in flight together.
    const concurrently = async (w: Waiter): Promise<Sampled> => {
      const waits: Promise<[string, number]>[] = [];
      for (let i = 0; i < options.concurrent; i++) {
        const { id } = await starter.startRun(latencyWorkflow, work());
        waits.push(w.engine.result(id, { timeout: '60s' }).then(() => [id, now()]));
      }
      const sampled: Sampled = { runs: [], lags: [] };
      for (const [id, resolvedAt] of await Promise.all(waits)) {
        sampled.runs.push(id);
        sampled.lags.push(await lagOf(id, resolvedAt));
      }
      return sampled;
    };
    const conPushed = await concurrently(pushed);
    const conPolled = await concurrently(polled);
    return {
      store: backend.title,
      mechanism,
      samples: options.samples,
      concurrent: options.concurrent,
      pushed: figures(pushed, seqPushed),
      polled: figures(polled, seqPolled),
      pushedConcurrent: figures(pushed, conPushed),
      polledConcurrent: figures(polled, conPolled),
    };
  } finally {
    await pushed.engine.stop();
    await polled.engine.stop();
    await starter.stop();
    if (child) await stopWorker(child);
    await opened.close();
  }
}
