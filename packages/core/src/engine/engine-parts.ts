// The parts every call of one engine shares, made once by createEngine (engine.ts): the runtime
// the executions read (engine-runtime.ts), the queue, the completion and stream signals, the store
// wake-ups, dispatch, and whether this engine is started and with workers.
import { createLocalQueue } from '../local-queue/create-local-queue.js';
import type { Json } from '../model/json.js';
import { Lifecycle } from '../observe/lifecycle.js';
import type { Queue, QueueWorker } from '../queue/queue.js';
import { toJsonRoundTrip } from '../serialization/json-value.js';
import type { CheckedEngineOptions } from './check-engine-options.js';
import type { EngineOptions } from './engine-contract.js';
import { createDispatch, type Dispatch } from './engine-dispatch.js';
import type { EngineRuntime } from './engine-runtime.js';
import { NO_FAULTS } from './fault-point.js';
import { OutageLog } from './outage.js';
import type { PushedStep } from './execution/pushed-work.js';
import { StickyExecutions } from './execution/sticky-executions.js';
import { WorkflowPauseCache } from './flow/workflow-pause-cache.js';
import { STREAM_TOPIC } from './messages/stream-limits.js';
import { ResultSignals } from './wakeups/result-signals.js';
import { ResultWaiter } from './wakeups/result-waiter.js';
import { StoreWakeups } from './wakeups/store-wakeups.js';
import type { WorkerRoster } from './wakeups/worker-roster.js';

/** Whether the engine is started, and what its start made (workers, listener, loops). */
export interface EngineState {
  started: boolean;
  /** Started with `{ workers: false }`: a client. */
  withoutWorkers: boolean;
  /** A run was sent through the store while not started: the first recovery pass runs at once. */
  sentWhileStopped: boolean;
  /** Aborted (with ENGINE_STOPPED) once stop()'s grace ran out; replaced by the next start. */
  shutdown: AbortController;
  /** Aborts a start() still waiting for the store or queue. */
  startWait: AbortController | undefined;
  recoveryLoop: AbortController | undefined;
  stopListening: (() => Promise<void>) | undefined;
  /** While listening: the other listening workers, so that one of them claims each signalled run. */
  roster: WorkerRoster | undefined;
  readonly workers: QueueWorker[];
  /** Inline starts run outside the queue's workers; stop() waits for them too. */
  readonly inlineRuns: Set<Promise<void>>;
}

/** What the engine's calls share (see `assembleEngineParts`). */
export interface EngineParts {
  /** The options as given, the store seen through the codec when there is one. */
  readonly options: EngineOptions;
  readonly checked: CheckedEngineOptions;
  readonly rt: EngineRuntime;
  readonly queue: Queue;
  /** The queue is the local one this engine made (no `queue` option). */
  readonly ownsQueue: boolean;
  /** No queue crosses processes: the store is the queue between them. */
  readonly storeIsQueue: boolean;
  readonly outage: OutageLog;
  /** Completion signals: runs ending here are announced to result() waiters of other processes. */
  readonly resultSignals: ResultSignals;
  /** Stream-write hints for `engine.request`'s callers: one listener shared by all of them. */
  readonly streamSignals: ResultSignals;
  readonly waiter: ResultWaiter;
  readonly wakeups: StoreWakeups;
  readonly dispatch: Dispatch;
  /** Runs executing for a push here (`engine.pushed`): their queued steps go back to the pusher. */
  readonly pushedSteps: Map<string, (step: PushedStep) => void>;
  readonly state: EngineState;
  /**
   * True when a run this engine starts or wakes goes through the store (due, and signalled) rather
   * than to its own local queue: it made that queue, and it has no workers consuming it.
   */
  storeDispatch(): boolean;
  /** A payload as JSON within `maxPayloadBytes`, or INVALID_INPUT naming `what`. */
  checkPayload(value: unknown, what: string): Json;
}

/** Builds the parts of an engine from its checked options. Nothing runs yet. */
export function assembleEngineParts(options: EngineOptions, checked: CheckedEngineOptions): EngineParts {
  const { clock, maxPayloadBytes } = checked;
  const ownsQueue = options.queue === undefined;
  const queue = options.queue ?? createLocalQueue({ clock });
  // Store and queue errors are logged once per cause during an outage, not once per call.
  const outage = new OutageLog(checked.logger, clock);
  const resultSignals = new ResultSignals(options.store, outage.logger);
  const streamSignals = new ResultSignals(options.store, outage.logger, STREAM_TOPIC);
  const state: EngineState = {
    started: false,
    withoutWorkers: false,
    sentWhileStopped: false,
    shutdown: new AbortController(),
    startWait: undefined,
    recoveryLoop: undefined,
    stopListening: undefined,
    roster: undefined,
    workers: [],
    inlineRuns: new Set(),
  };
  // Without a queue that crosses processes, the store is the queue between them: an engine
  // started without workers makes every run it starts or wakes due in the store and signals it
  // (instead of sending a job to a local queue nobody here consumes), and engines with workers
  // listen and claim it through their own local queue, or find it by polling (the recovery loop)
  // on a store without signals. An engine with workers keeps its own runs local: no extra round
  // trip on a single process's path.
  // Sending through the store: only over the local queue this engine created, which nothing else
  // reads (a local queue passed in may be shared with engines of this process that do). Listening:
  // whenever jobs from other processes cannot arrive through the queue.
  // An engine never started (or stopped) has no consumer for its own local queue either: it is a
  // client, exactly as one started without workers (issue 32's trap: a run started by it used to
  // wait in that queue until another process's start grace ended).
  const storeDispatch = () => {
    if (!ownsQueue) return false;
    if (!state.started) state.sentWhileStopped = true;
    return state.withoutWorkers || !state.started;
  };
  const wakeups = new StoreWakeups(options.store, outage.logger);
  const dispatch = createDispatch({ ...checked, queue, wakeups, throughStore: storeDispatch });
  const pushedSteps = new Map<string, (step: PushedStep) => void>();
  const waiter = new ResultWaiter((runId) => rt.executing.has(runId), resultSignals);
  const rt = runtimeOf({ options, checked, queue, outage, state, dispatch, pushedSteps, waiter, resultSignals });
  return {
    options,
    checked,
    rt,
    queue,
    ownsQueue,
    storeIsQueue: !queue.capabilities.distributed,
    outage,
    resultSignals,
    streamSignals,
    waiter,
    wakeups,
    dispatch,
    pushedSteps,
    state,
    storeDispatch,
    checkPayload: (value, what) => toJsonRoundTrip(value, { what, maxBytes: maxPayloadBytes }).value,
  };
}

/** The runtime every execution of this engine reads (see `EngineRuntime`). */
function runtimeOf(
  parts: Pick<EngineParts, 'options' | 'checked' | 'queue' | 'outage' | 'state' | 'dispatch' | 'pushedSteps' | 'waiter' | 'resultSignals'>,
): EngineRuntime {
  const { options, checked, queue, outage, state, dispatch, pushedSteps, waiter, resultSignals } = parts;
  const { clock, workerId } = checked;
  return {
    store: options.store,
    queue,
    clock,
    workerId,
    timings: checked.timings,
    maxPayloadBytes: checked.maxPayloadBytes,
    ...(checked.defaultRetry === undefined ? {} : { defaultRetry: checked.defaultRetry }),
    faults: options.faults ?? NO_FAULTS,
    registry: checked.registry,
    logger: outage.logger,
    lifecycle: new Lifecycle(outage.logger, clock, workerId, options.store.name),
    executing: new Map(),
    turnsInProgress: { count: 0 },
    sticky: checked.sticky === undefined ? undefined : new StickyExecutions(checked.sticky),
    rerun: new Set(),
    workflowPauses: new WorkflowPauseCache(options.store, clock),
    shutdown: () => state.shutdown.signal,
    dispatchRun: dispatch.dispatchRun,
    dispatchStep: (job, delayMs) => {
      const sink = pushedSteps.get(job.runId);
      if (sink === undefined) return dispatch.dispatchStep(job, delayMs);
      sink(delayMs !== undefined && delayMs > 0 ? { job, delayMs } : { job });
      return Promise.resolve();
    },
    notifyFinished: (run) => {
      waiter.notify(run);
      resultSignals.announce(run.id);
    },
    executionLeft: (runId) => waiter.left(runId),
  };
}
