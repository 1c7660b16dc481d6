import type { CheckScenarioOptions } from './scenarios/check.js';
import type { CodecOptions } from './scenarios/codec.js';
import type { StreamLatencyOptions } from './scenarios/stream-latency.js';
import type { RequestLatencyOptions } from './scenarios/request-latency.js';
import type { ServerlessOptions } from './scenarios/serverless.js';
import type { BulkCancelOptions } from './scenarios/bulk-cancel.js';
import type { TagListingOptions } from './scenarios/tag-listing.js';
import type { CpuOptions } from './scenarios/cpu-per-step.js';
import type { FloorOptions } from './scenarios/pg-floor.js';
import type { PushedResultsOptions } from './scenarios/pushed-results.js';
import type { WakeOptions } from './scenarios/wake.js';

/** Sizes and repetitions of a run: the full bench, or `--smoke` (tiny, for CI: counts, never timings). */
export interface BenchConfig {
  mode: 'full' | 'smoke';
  inline: { sizes: number[]; warmup: number; reps: number };
  replay: { sizes: number[]; warmup: number; reps: number };
  /** Wake cost against history length and per iteration of a wait loop (issue 30). */
  wake: WakeOptions;
  latency: { samples: number; maxWorkMs: number; warmup: number; reps: number };
  /** `inFlight`: runs (and floor INSERT loops, one connection each) at once in the concurrent part. */
  floor: FloorOptions;
  localThroughput: { runs: number; steps: number; concurrency: number; reps: number };
  processThroughput: { runs: number; steps: number; concurrency: number; workers: number[]; idleMs: number };
  fairness: { smallRuns: number; ratio: number; workMs: number; concurrency: number; groupConcurrency: number };
  observability: { runs: number; steps: number; reps: number };
  idle: { passes: number };
  dispatch: { runs: number; workers: number[]; idleMs: number };
  /** result() across processes: sequential samples per way of waiting, and runs waited for at once (see `PushedResultsOptions`). */
  results: PushedResultsOptions;
  /** The engine-CPU scenario's sizes and warm-up (see `CpuOptions`). */
  cpu: CpuOptions;
  /** Flow control: `runs` sequential runs per limit variant; two keys, one with `ratio`× the other's `smallRuns`. */
  flow: { runs: number; smallRuns: number; ratio: number; concurrency: number; workMs: number };
  /** The pre-deploy check: `runs` in-flight runs of `steps` recorded steps (and a tenth of them); see `CheckScenarioOptions`. */
  check: CheckScenarioOptions;
  /** The payload codec's cost per step: `runs` inline runs of `steps` order-returning steps per repetition, codec off and on. */
  codec: CodecOptions;
  /** Stream reader latency: `chunks` chunks (after `warmup`), each after a 0..maxWorkMs step. */
  streams: StreamLatencyOptions;
  /** Request latency to a suspended run: `requests` requests one by one (after `warmup`). */
  requests: RequestLatencyOptions;
  /** The serverless handler: its cost per push, and a long run through a dispatcher beside a worker (issue 35). */
  serverless: ServerlessOptions;
  /** The bulk cancel: `runs` pending runs cancelled by one `engine.bulk` in pages of `pageSize`. */
  bulk: BulkCancelOptions;
  /** Tag listings: `runs` runs with two tags each, then the first page by tag, `samples` times per query. */
  tags: TagListingOptions;
}

export const FULL: BenchConfig = {
  mode: 'full',
  inline: { sizes: [10, 100], warmup: 3, reps: 11 },
  replay: { sizes: [100, 1000, 2000], warmup: 3, reps: 15 },
  wake: { sizes: [10, 10_000], loops: [50, 400], warmup: 3, reps: 15 },
  latency: { samples: 100, maxWorkMs: 40, warmup: 3, reps: 11 },
  floor: { steps: 100, warmUpSteps: 10_000, warmup: 2, reps: 9, inFlight: 8, inFlightSeries: [8, 64], seriesReps: { warmup: 1, reps: 7 } },
  localThroughput: { runs: 200, steps: 3, concurrency: 10, reps: 3 },
  processThroughput: { runs: 600, steps: 3, concurrency: 10, workers: [1, 2, 4, 8], idleMs: 5000 },
  fairness: { smallRuns: 5, ratio: 100, workMs: 2, concurrency: 10, groupConcurrency: 5 },
  observability: { runs: 40, steps: 25, reps: 11 },
  idle: { passes: 10 },
  dispatch: { runs: 100, workers: [1, 2, 4], idleMs: 5000 },
  results: { samples: 200, concurrent: 50, minWorkMs: 20, spreadWorkMs: 40, warmup: 3 },
  // 40 repetitions (40,000 steps) per store state: with 7, one major collection more or less moved
  // the memory store's mean by 4-12 µs.
  cpu: { steps: 100, runs: 10, coldSteps: 5_000, warmUpSteps: 40_000, maxWarmUpSteps: 60_000, warmup: 5, reps: 40, fill: 10_000 },
  flow: { runs: 50, smallRuns: 10, ratio: 10, concurrency: 8, workMs: 5 },
  // Issue 27's target: 10,000 in-flight runs of 50 recorded steps on PostgreSQL in ≤ 15 s. The
  // memory store cannot be filled with SQL: its runs go through the engine, 2,000 of them.
  check: { runs: 10_000, steps: 50, reps: 3, engineRuns: 2_000, replays: 2_000 },
  codec: { steps: 100, runs: 5, warmupRuns: 100, reps: 20 },
  streams: { chunks: 200, warmup: 5, maxWorkMs: 20 },
  requests: { requests: 100, warmup: 5 },
  serverless: { pushes: 200, warmup: 20, runSteps: 100, runSamples: 7, runWarmup: 1 },
  // Issue 32's target: 10,000 runs cancelled in ≤ 30 s on PostgreSQL.
  bulk: { runs: 10_000, pageSize: 500 },
  tags: { runs: 100_000, customers: 10_000, samples: 50 },
};

export const SMOKE: BenchConfig = {
  mode: 'smoke',
  inline: { sizes: [3, 13], warmup: 1, reps: 2 },
  replay: { sizes: [5, 10, 20], warmup: 1, reps: 2 },
  wake: { sizes: [10, 200], loops: [5, 20], warmup: 1, reps: 3 },
  latency: { samples: 3, maxWorkMs: 5, warmup: 1, reps: 1 },
  floor: { steps: 10, warmUpSteps: 10, warmup: 1, reps: 2, inFlight: 8, inFlightSeries: [8], seriesReps: { warmup: 1, reps: 2 } },
  localThroughput: { runs: 10, steps: 2, concurrency: 4, reps: 1 },
  processThroughput: { runs: 20, steps: 2, concurrency: 4, workers: [1, 2], idleMs: 1000 },
  fairness: { smallRuns: 1, ratio: 20, workMs: 1, concurrency: 4, groupConcurrency: 2 },
  observability: { runs: 2, steps: 3, reps: 1 },
  idle: { passes: 3 },
  dispatch: { runs: 5, workers: [1, 2], idleMs: 1000 },
  results: { samples: 5, concurrent: 5, minWorkMs: 20, spreadWorkMs: 20, warmup: 1 },
  cpu: { steps: 13, runs: 2, coldSteps: 26, warmUpSteps: 26, maxWarmUpSteps: 26, warmup: 1, reps: 1, fill: 20 },
  flow: { runs: 3, smallRuns: 2, ratio: 10, concurrency: 4, workMs: 1 },
  check: { runs: 20, steps: 5, reps: 1, engineRuns: 20, replays: 5 },
  codec: { steps: 5, runs: 1, warmupRuns: 1, reps: 2 },
  streams: { chunks: 3, warmup: 1, maxWorkMs: 2 },
  requests: { requests: 3, warmup: 1 },
  serverless: { pushes: 3, warmup: 1, runSteps: 10, runSamples: 1, runWarmup: 0 },
  bulk: { runs: 30, pageSize: 7 },
  tags: { runs: 60, customers: 10, samples: 3 },
};
