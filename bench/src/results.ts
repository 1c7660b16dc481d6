import type { BackendName } from './backends/types.js';
import type { MachineInfo } from './machine.js';
import type { FairnessResult } from './scenarios/fairness.js';
import type { InlineResult } from './scenarios/inline-steps.js';
import type { LatencyResult } from './scenarios/result-latency.js';
import type { LocalThroughputResult } from './scenarios/local-throughput.js';
import type { FloorResult } from './scenarios/pg-floor.js';
import type { ProcessThroughputResult } from './scenarios/process-throughput.js';
import type { ReplayResult } from './scenarios/replay.js';
import type { WakeResult } from './scenarios/wake.js';
import type { ObservabilityResult } from './scenarios/observability.js';
import type { IdleCostResult } from './scenarios/idle-cost.js';
import type { StoreDispatchResult } from './scenarios/store-dispatch.js';
import type { PushedResultsResult } from './scenarios/pushed-results.js';
import type { CodecResult } from './scenarios/codec.js';
import type { CpuResult } from './scenarios/cpu-per-step.js';
import type { FlowResult } from './scenarios/flow.js';
import type { CheckResult } from './scenarios/check.js';
import type { StreamLatencyResult } from './scenarios/stream-latency.js';
import type { RequestLatencyResult } from './scenarios/request-latency.js';
import type { ServerlessResult } from './scenarios/serverless.js';
import type { BulkCancelResult } from './scenarios/bulk-cancel.js';
import type { TagListingResult } from './scenarios/tag-listing.js';

export interface ScenarioError {
  scenario: string;
  message: string;
}

/** Everything measured on one backend. */
export interface BackendReport {
  name: BackendName;
  title: string;
  server: string;
  /** False: "round trips" are store calls (memory has no driver). */
  driverCounted: boolean;
  inline?: InlineResult;
  replay?: ReplayResult;
  wake?: WakeResult;
  latency?: LatencyResult;
  localThroughput?: LocalThroughputResult;
  /** Requests of an idle engine, counted over recovery passes on a manual clock. */
  idle?: IdleCostResult;
  /** Client CPU per inline step, on an empty store and on one holding many finished runs (`--scenarios=cpu`). */
  cpu?: CpuResult;
  /** Flow control: round trips of a limited run, fairness across keys (`--scenarios=flow`; stores with slots). */
  flow?: FlowResult;
  /** The pre-deploy check over many in-flight runs (`--scenarios=check`; memory, SQLite, PostgreSQL). */
  check?: CheckResult;
  /** The payload codec's cost per step, off against on (`--scenarios=codec`; memory, SQLite, PostgreSQL). */
  codec?: CodecResult;
  /** A stream chunk's latency to a reader on another connection (`--scenarios=streams`). */
  streams?: StreamLatencyResult;
  /** A request's round trip to a suspended run from a caller on another connection (`--scenarios=requests`). */
  requests?: RequestLatencyResult;
  /** The serverless handler's cost per push and a run through a dispatcher beside a worker (`--scenarios=serverless`; memory, SQLite, PostgreSQL, Redis). */
  serverless?: ServerlessResult;
  /** One bulk cancel of many pending runs (`--scenarios=bulk`). */
  bulk?: BulkCancelResult;
  /** First pages of runs found by tag (`--scenarios=tags`). */
  tags?: TagListingResult;
  errors: ScenarioError[];
  /** Things that went wrong and were recovered from (abandoned executions), per scenario. */
  incidents: string[];
}

export interface SkippedBackend {
  name: string;
  title: string;
  reason: string;
}

/** One target: what it asks, what was measured, and whether it holds. */
export interface TargetCheck {
  target: string;
  subject: string;
  measured: string;
  holds: boolean;
  /** Checked (and failing the run) in smoke mode; timing targets are only reported. */
  enforced: boolean;
}

export interface BenchResults {
  mode: 'full' | 'smoke';
  command: string;
  machine: MachineInfo;
  backends: BackendReport[];
  skipped: SkippedBackend[];
  floor?: FloorResult & { cairnWriteTransactionsPerStep?: number; cairnAsyncCommitsPerStep: number };
  processThroughput: ProcessThroughputResult[];
  /** Worker processes on the local queue, runs reaching them through the store (`--scenarios=dispatch`). */
  storeDispatch: StoreDispatchResult[];
  /** `result()` of runs executing in another process, pushed and polled (`--scenarios=results`); absent in results saved before it. */
  pushedResults?: PushedResultsResult[];
  fairness: FairnessResult[];
  /** Cost of lifecycle events and tracing on the memory store (`--scenarios=observability`). */
  observability?: ObservabilityResult;
  errors: ScenarioError[];
  notes: string[];
  targets: TargetCheck[];
  durationMs: number;
}
