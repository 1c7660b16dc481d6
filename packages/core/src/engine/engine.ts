import { CairnError } from '../errors/cairn-error.js';
import { createLocalQueue } from '../local-queue/create-local-queue.js';
import type { Json } from '../model/json.js';
import { isTerminalRunStatus, type RunRecord } from '../model/run.js';
import { retryRun } from './retry-run.js';
import { WorkflowPauseCache } from './workflow-pause-cache.js';
import {
  getWorkflowPause,
  listWorkflowPauses,
  pauseRun,
  pauseWorkflow,
  resumeRun,
  resumeWorkflow,
  sweepPausedWorkflow,
  type PauseParts,
} from './pause-runs.js';
import { forkRun } from './fork-run.js';
import { pruneRuns, PRUNE_BATCH } from './prune-runs.js';
import type { QueueWorker, WorkOptions } from '../queue/queue.js';
import { toJsonRoundTrip } from '../serialization/json-value.js';
import type { EngineRuntime } from './engine-runtime.js';
import { checkEngineOptions } from './check-engine-options.js';
import { createDispatch } from './engine-dispatch.js';
import { settlesWithin } from './settles-within.js';
import { wakeUpHandlers } from './wake-up-handlers.js';
import { NO_FAULTS } from './fault-point.js';
import { Lifecycle } from '../observe/lifecycle.js';
import { checkTraceContext } from '../observe/check-trace-context.js';
import { executeRun } from './execute-run.js';
import { executeStepJob } from './execute-step-job.js';
import type { StepJob } from './step-job.js';
import { createPushedWork, type PushedStep } from './pushed-work.js';
import { StickyExecutions } from './sticky-executions.js';
import { ResultWaiter } from './result-waiter.js';
import { StoreWakeups } from './store-wakeups.js';
import { ResultSignals } from './result-signals.js';
import { codecStore } from '../codec/codec-store.js';
import { WorkerRoster } from './worker-roster.js';
import { uuidv7 } from './uuid.js';
import { createEngineSchedules, declareSchedule } from '../schedule/engine-schedules.js';
import { createEngineVersions } from './engine-versions.js';
import { createScheduleRunner } from '../schedule/schedule-runner.js';
import { OutageLog, untilReachable, type StartWait } from './outage.js';
import { type Duration, toMilliseconds } from './duration.js';
import { getBulk, listBulk, resumeBulk, runBulk, type BulkParts } from '../bulk/run-bulk.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkOptionalBoolean, checkOptions, checkRunId, checkRunQuery, invalidInput } from './check-input.js';
import { sendEvent } from './send-event.js';
import { sendRequest } from './send-request.js';
import { STREAM_TOPIC } from './stream-limits.js';
import { isReservedStream } from './reserved-streams.js';
import { queryRun } from './query-run.js';
import { readStream, streamsOf } from './stream-reader.js';
import { continuedAs } from './continued-as.js';
import { cancelledError } from './execution/outcome.js';
import { preWakeParent, wakeParent } from './wake-parent.js';
import { earliest, resolveDeadline } from './run-deadline.js';
import { runDoctor } from './doctor/run-doctor.js';
import { buildRunTimeline } from './run-timeline.js';
import { checkPriority } from '../store/check-slot-arguments.js';
import { checkTags, tagsUnsupported } from './check-tags.js';
import { flowKeys } from './flow-keys.js';
import { isReserved } from './start-chain.js';
import { checkStartGate, startGated, startGateOf } from './start-gate.js';
import { definitionForStart } from './start-version.js';
import { workflowInput } from '../validation/workflow-input.js';
import type { AnyWorkflowDefinition } from './any-workflow-definition.js';

// The longest cancel reason, in UTF-16 code units (stored as text on every backend).
const MAX_CANCEL_REASON = 1000;

export type { CancelOptions, Engine, EngineOptions, HistoryEntry, RunHandle, StartOptions } from './engine-contract.js';
import type { CancelOptions, Engine, EngineOptions, StartOptions } from './engine-contract.js';

const DEFAULT_STOP_GRACE_MS = 30_000;
// After abandoning, how long stop() still waits for the executions to wind down.
const ABANDON_WAIT_MS = 1_000;
// How often a busy listening worker says `here` again (WorkerRoster.announceDue): one signal per
// 30 s while it claims signalled runs, none while idle.
const ROSTER_ANNOUNCE_MS = 30_000;

/**
 * The name `startRun` was given: a string as it is, a definition's `name`; anything else is
 * handed on for `checkIdentifier` to refuse.
 */
function workflowName(workflow: unknown): unknown {
  if (typeof workflow !== 'object' || workflow === null || workflow instanceof String) return workflow;
  const { name } = workflow as { name?: unknown };
  if (typeof name !== 'string') throw invalidInput('startRun workflow', 'must be a workflow name or a definition made by defineWorkflow', workflow);
  return name;
}

/** Builds an engine over a store and a queue. Nothing runs until `start()`. */
export function createEngine(given: EngineOptions): Engine {
  // With a codec, the engine runs on the store seen through it: every payload is encoded on its way in and decoded on its way out.
  const options = given.codec === undefined || given.store === undefined ? given : { ...given, store: codecStore(given.store, given.codec) };
  const checked = checkEngineOptions(options);
  const { registry, declaredSchedules, strategy, clock, timings, retention, maxPayloadBytes, pollIntervalMs, recoveryIntervalMs, workerId } = checked;
  const ownsQueue = options.queue === undefined;
  const queue = options.queue ?? createLocalQueue({ clock });
  // Store and queue errors are logged once per cause during an outage, not once per call.
  const outage = new OutageLog(checked.logger, clock);
  // Completion signals: runs ending here are announced to result() waiters of other processes.
  const resultSignals = new ResultSignals(options.store, outage.logger);
  // Stream-write hints for `engine.request`'s callers: one listener shared by all of them.
  const streamSignals = new ResultSignals(options.store, outage.logger, STREAM_TOPIC);
  const waiter = new ResultWaiter((runId) => rt.executing.has(runId), resultSignals);
  let startWait: AbortController | undefined;

  // Without a queue that crosses processes, the store is the queue between them: an engine
  // started without workers makes every run it starts or wakes due in the store and signals it
  // (instead of sending a job to a local queue nobody here consumes), and engines with workers
  // listen and claim it through their own local queue, or find it by polling (the recovery loop)
  // on a store without signals. An engine with workers keeps its own runs local: no extra round
  // trip on a single process's path.
  // Sending through the store: only over the local queue this engine created, which nothing else
  // reads (a local queue passed in may be shared with engines of this process that do). Listening:
  // whenever jobs from other processes cannot arrive through the queue.
  const storeIsQueue = !queue.capabilities.distributed;
  const wakeups = new StoreWakeups(options.store, outage.logger);
  let withoutWorkers = false;
  // An engine never started (or stopped) has no consumer for its own local queue either: it is a
  // client, exactly as one started without workers (issue 32's trap: a run started by it used to
  // wait in that queue until another process's start grace ended).
  const storeDispatch = () => {
    if (!ownsQueue) return false;
    if (!started) sentWhileStopped = true;
    return withoutWorkers || !started;
  };
  let sentWhileStopped = false;
  const dispatch = createDispatch({ ...checked, queue, wakeups, throughStore: storeDispatch });
  let stopListening: (() => Promise<void>) | undefined;
  // While listening: the other listening workers, so that one of them claims each signalled run.
  let roster: WorkerRoster | undefined;

  // Runs executing for a push here (`engine.pushed`): their queued steps go back to the pusher.
  const pushedSteps = new Map<string, (step: PushedStep) => void>();
  const rt: EngineRuntime = {
    store: options.store,
    queue,
    clock,
    workerId,
    timings,
    maxPayloadBytes,
    ...(checked.defaultRetry === undefined ? {} : { defaultRetry: checked.defaultRetry }),
    faults: options.faults ?? NO_FAULTS,
    registry,
    logger: outage.logger,
    lifecycle: new Lifecycle(outage.logger, clock, workerId, options.store.name),
    executing: new Map(),
    turnsInProgress: { count: 0 },
    sticky: checked.sticky === undefined ? undefined : new StickyExecutions(checked.sticky),
    rerun: new Set(),
    workflowPauses: new WorkflowPauseCache(options.store, clock),
    shutdown: () => shutdown.signal,
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

  const workers: QueueWorker[] = [];
  // Inline starts run outside the queue's workers; stop() waits for them too.
  const inlineRuns = new Set<Promise<void>>();
  let shutdown = new AbortController();
  let recoveryLoop: AbortController | undefined;
  let started = false;

  const checkPayload = (value: unknown, what: string): Json => toJsonRoundTrip(value, { what, maxBytes: maxPayloadBytes }).value;

  const orchestratorHandler = async (job: { payload: Json }) => {
    const runId = (job.payload as { runId?: unknown })?.runId;
    if (typeof runId !== 'string') return;
    await executeRun(rt, runId);
    rt.faults.hit({ point: 'before-ack', runId });
  };
  const stepHandler = async (job: { payload: Json }) => {
    const payload = job.payload as Partial<StepJob> | null;
    if (
      !payload ||
      typeof payload.runId !== 'string' ||
      typeof payload.key !== 'string' ||
      typeof payload.attempt !== 'number' ||
      typeof payload.workflow !== 'string'
    )
      return;
    await executeStepJob(rt, payload as StepJob);
    rt.faults.hit({ point: 'before-ack', runId: payload.runId, stepKey: payload.key });
  };

  const scheduleRunner = createScheduleRunner({
    store: rt.store,
    clock,
    logger: rt.logger,
    workerId,
    declared: declaredSchedules,
    runs: (workflow) => registry.current(workflow) !== undefined,
    startRun: async (workflow, input, idempotencyKey) => (await engine.startRun(workflow, input, { idempotencyKey })).id,
  });

  const recover = async (): Promise<number> => {
    const due = await rt.store.runs.findDue(clock.now(), 500);
    for (const run of due) {
      // A run signalled to another worker and still due: that worker is gone (or far behind).
      roster?.overdue(run.id, clock.now(), recoveryIntervalMs);
      await rt.dispatchRun(run);
      if (rt.lifecycle.recovery)
        rt.lifecycle.recovered({ type: 'recovery.dispatched', runId: run.id, workflow: run.workflow, reason: run.reason, workerId, at: clock.now() });
    }
    return due.length;
  };

  // A pause reaches an execution of another process by the signal a cancel uses ('abort': it reads
  // the run and observes what it finds), else by that execution's next lease renewal.
  const pauseParts: PauseParts = { rt, tellElsewhere: (run) => wakeups.signal(run.id, run.workflow, 'abort') };
  /** Requests the run's cancellation and tells whoever executes it; the run as the request left it. */
  const cancelRun = async (runId: string, reason: string | undefined): Promise<RunRecord> => {
    const run = await (reason === undefined ? rt.store.runs.requestCancel(runId, clock.now()) : rt.store.runs.requestCancel(runId, clock.now(), reason));
    if (!run) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
    if (isTerminalRunStatus(run.status)) return run;
    // The stored reason: the first request's, which may not be this one's.
    rt.executing.get(runId)?.observeCancel(cancelledError(runId, run.cancelReason));
    // Through the store, marked as a cancel, so a worker of another process executing the run
    // aborts its bodies at once (a cancel is rare: the extra signal costs no hot path). An engine
    // with workers dispatched the run itself: the others only abort an execution they hold.
    if (storeDispatch()) await wakeups.signal(run.id, run.workflow, 'cancel');
    else {
      // Taken before the dispatch, whose job may start executing here at once.
      const executingHere = rt.executing.has(runId);
      await rt.dispatchRun(run);
      if (storeIsQueue && !executingHere) await wakeups.signal(run.id, run.workflow, 'abort');
    }
    return run;
  };

  const engine: Engine = {
    workerId,
    schedules: createEngineSchedules({
      store: rt.store,
      clock,
      runner: scheduleRunner,
      runs: (workflow) => registry.current(workflow) !== undefined,
      computes: (name) => declaredSchedules.get(name)?.computeInput !== undefined,
      maxPayloadBytes,
    }),
    versions: createEngineVersions({ store: rt.store, clock }),
    pushed: createPushedWork(rt, pushedSteps),
    doctor: (doctorOptions) =>
      runDoctor(
        { store: rt.store, dispatchRun: rt.dispatchRun, dispatchStep: rt.dispatchStep, reachesWorkers: () => !ownsQueue || workers.length > 0 },
        clock.now(),
        doctorOptions,
      ),
    get turnsInProgress() {
      return rt.turnsInProgress.count;
    },
    get keptExecutions() {
      return { executions: rt.sticky?.size ?? 0, calls: rt.sticky?.calls ?? 0 };
    },
    async start(rawStartOptions) {
      const startOptions = checkOptions('start options', rawStartOptions, ['workers']) as { workers?: boolean };
      checkOptionalBoolean('start workers', startOptions.workers);
      if (started) return;
      if (strategy === 'shared-groups' && !queue.capabilities.groups) {
        throw new CairnError(
          'QUEUE_UNSUPPORTED',
          `Queue ${queue.name} has no job groups, which the 'shared-groups' strategy needs for fairness; use queueStrategy: 'per-workflow'`,
          {
            data: { queue: queue.name, strategy },
          },
        );
      }
      // While the store or queue is unreachable, wait and retry (up to startTimeoutMs).
      startWait = new AbortController();
      const { startTimeoutMs } = checked;
      const wait: StartWait = { clock, outage, timeoutMs: startTimeoutMs, deadline: clock.now() + startTimeoutMs, signal: startWait.signal };
      for (const def of registry.all()) {
        await untilReachable(`registering ${def.name}@${def.version}`, wait, () =>
          rt.store.versions.upsert(def.name, def.version, { description: def.options.description ?? null, tier: def.options.tier ?? null }, clock.now()),
        );
      }
      for (const def of declaredSchedules.values()) {
        await untilReachable(`declaring schedule ${def.name}`, wait, () => declareSchedule(rt.store, def, clock.now()));
      }
      // Learns when the first schedule is due (and fires any due now) as part of starting.
      if (startOptions.workers !== false) await untilReachable('reading the schedules', wait, () => scheduleRunner.pass());
      started = true;
      if (shutdown.signal.aborted) shutdown = new AbortController();
      withoutWorkers = startOptions.workers === false;
      if (withoutWorkers) return;
      const concurrency = options.concurrency ?? 10;
      const workOptions: WorkOptions = strategy === 'shared-groups' ? { concurrency, groupConcurrency: options.groupConcurrency ?? 5 } : { concurrency };
      const seen = new Set<string>();
      try {
        for (const name of registry.names()) {
          const queues = dispatch.queuesFor(name);
          if (!seen.has(queues.orchestrator))
            workers.push(
              await untilReachable(`starting a worker on ${queues.orchestrator}`, wait, () =>
                queue.work(queues.orchestrator, orchestratorHandler, workOptions),
              ),
            );
          if (!seen.has(queues.step))
            workers.push(await untilReachable(`starting a worker on ${queues.step}`, wait, () => queue.work(queues.step, stepHandler, workOptions)));
          seen.add(queues.orchestrator).add(queues.step);
        }
        if (storeIsQueue && wakeups.available) {
          const members = new WorkerRoster(workerId, registry.names(), clock.now());
          roster = members;
          const handlers = wakeUpHandlers({ rt, wakeups, roster: members, recover, recovered: () => outage.recovered(), running: () => started });
          stopListening = await untilReachable('listening for wake-ups', wait, () => wakeups.listen(handlers));
          await wakeups.announce('join', workerId, registry.names());
        }
      } catch (error) {
        // A start that gave up leaves no worker running, so a later start() begins afresh.
        roster = undefined;
        await Promise.allSettled(workers.splice(0).map((worker) => worker.stop()));
        started = false;
        throw error;
      }
      // The paused workflows, so that first claims check them without a read (decision 63); a
      // failed read is retried by the recovery loop.
      await rt.workflowPauses.refresh(true).catch((error: unknown) => rt.logger.warn({ workerId, err: error }, 'reading the paused workflows failed'));
      recoveryLoop = new AbortController();
      const signal = recoveryLoop.signal;
      void (async () => {
        // Runs this engine sent through the store before it started were signalled while nobody
        // here listened: one pass at once picks them up instead of one recovery interval later.
        if (sentWhileStopped) {
          sentWhileStopped = false;
          await recover().catch((error: unknown) => {
            if (!signal.aborted) rt.logger.error({ workerId, err: error }, 'recovery pass failed');
          });
        }
        while (!signal.aborted) {
          try {
            await clock.sleep(recoveryIntervalMs, signal);
            await recover();
            // A busy worker says `here` now and then, in case another dropped it (decision 40).
            if (roster?.announceDue(clock.now(), ROSTER_ANNOUNCE_MS)) await wakeups.announce('here', workerId, registry.names());
            // Retention: one small batch per pass, so a large backlog never stalls recovery.
            if (retention !== undefined && Object.keys(retention).length > 0) await pruneRuns(rt, retention, { limit: PRUNE_BATCH });
            // Due ticks are fired on the same beat, read only when one is due (the earliest due
            // time is known from the last read) or every DISCOVERY_MS: idle passes stay one request.
            await scheduleRunner.passIfDue();
            // Paused workflows, re-read now and then: a run started in another process after a
            // workflow's pause is paused at its first claim here, or by this sweep (decision 63).
            for (const workflow of await rt.workflowPauses.refresh()) if (registry.current(workflow)) await sweepPausedWorkflow(pauseParts, workflow);
            outage.recovered();
          } catch (error) {
            if (!signal.aborted) rt.logger.error({ workerId, err: error }, 'recovery pass failed');
          }
        }
      })();
    },

    async stop(rawStopOptions) {
      const stopOptions = checkOptions('stop options', rawStopOptions, ['graceMs']) as { graceMs?: number };
      const graceMs = stopOptions.graceMs ?? options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
      if (typeof graceMs !== 'number' || Number.isNaN(graceMs) || graceMs < 0) {
        throw new CairnError('INVALID_INPUT', `stop: graceMs must be a number ≥ 0 (or Infinity), got ${String(graceMs)}`);
      }
      startWait?.abort();
      recoveryLoop?.abort();
      const listening = stopListening;
      stopListening = undefined;
      // The others take this worker's share of signalled runs at once.
      if (roster !== undefined) await wakeups.announce('leave', workerId, []);
      roster = undefined;
      await listening?.().catch((error: unknown) => rt.logger.error({ workerId, err: error }, 'stopping the wake-up listener failed'));
      const drained = Promise.all([...workers.splice(0).map((w) => w.stop()), ...inlineRuns]).then(() => undefined);
      let finished = await settlesWithin(clock, drained, graceMs);
      if (!finished) {
        shutdown.abort(new CairnError('ENGINE_STOPPED', `engine stopped: in-flight work outlived the ${graceMs} ms grace period`));
        for (const execution of rt.executing.values()) execution.abandon(shutdown.signal.reason);
        // Abandoned executions end at once; a step body that ignores its signal is not waited for.
        finished = await settlesWithin(clock, drained, ABANDON_WAIT_MS);
      }
      if (ownsQueue) await (finished ? queue.close() : settlesWithin(clock, queue.close(), ABANDON_WAIT_MS));
      // The completion signals of the runs that ended are sent; waiters still here poll from now on.
      await resultSignals.close();
      await streamSignals.close();
      // A stopped engine resumes nothing: its runs replay wherever they are claimed next.
      rt.sticky?.clear();
      started = false;
      withoutWorkers = false;
    },

    async startRun(workflow, input, rawStartOptions) {
      const name = checkIdentifier('startRun workflow', workflowName(workflow), IDENTIFIER_LIMITS.workflowName);
      const startOptions = checkOptions('startRun options', rawStartOptions, [
        'idempotencyKey',
        'mode',
        'version',
        'deadline',
        'traceContext',
        'priority',
        'tags',
        'singleton',
        'debounce',
        'batch',
      ]) as StartOptions;
      const { priority } = startOptions;
      if (priority !== undefined) checkPriority('startRun priority', priority);
      const tags = startOptions.tags === undefined ? undefined : checkTags('startRun tags', startOptions.tags);
      if (tags !== undefined && rt.store.runs.setTags === undefined) throw tagsUnsupported('startRun tags', rt.store.name);
      const traceContext =
        checkTraceContext('startRun traceContext', startOptions.traceContext) ??
        (options.traceContext === undefined ? undefined : checkTraceContext('createEngine traceContext()', options.traceContext()));
      const version = startOptions.version === undefined ? undefined : checkIdentifier('startRun version', startOptions.version, IDENTIFIER_LIMITS.version);
      const key =
        startOptions.idempotencyKey === undefined
          ? undefined
          : checkIdentifier('startRun idempotencyKey', startOptions.idempotencyKey, IDENTIFIER_LIMITS.idempotencyKey);
      if (key !== undefined && isReserved(key)) {
        throw invalidInput('startRun idempotencyKey', 'must not start with U+0001 (Cairn keeps those keys for singleton, debounce and batch runs)', key);
      }
      const startGate = checkStartGate('startRun', startOptions, false);
      // An unknown workflow or version is refused before anything is read.
      const provisional = registry.forStart(name, version);
      // No input (`undefined`) is stored, and handed to the workflow, as `null`: JSON has no `undefined`.
      const given = input === undefined ? null : input;
      const what = `input of workflow ${JSON.stringify(name)}`;
      // Without an input schema, a non-JSON input is refused before anything is read; with one, the
      // schema of the version the run goes on sees the input first (it may transform it).
      let json = provisional.options.input === undefined ? checkPayload(given, what) : undefined;
      const mode = startOptions.mode ?? options.startMode ?? 'queued';
      if (mode !== 'inline' && mode !== 'queued') throw invalidInput('startRun mode', "must be 'inline' or 'queued'", mode);
      let def: AnyWorkflowDefinition;
      try {
        def = await definitionForStart(rt.store.versions, registry, name, version);
      } catch (error) {
        // A retired version takes no new run, but a repeated key is no new run: it finds the run that holds it.
        const existing = key !== undefined && CairnError.is(error, 'VERSION_RETIRED') ? await rt.store.runs.findByIdempotencyKey(name, key) : undefined;
        if (!existing) throw error;
        return { id: existing.id, created: false, result: (resultOptions) => engine.result(existing.id, resultOptions) };
      }
      if (def.options.input !== undefined) json = checkPayload(await workflowInput(def, given, what), what);
      else json ??= checkPayload(given, what);
      // The keys are computed again at every claim: a key function that refuses this input fails the start instead.
      flowKeys(def, json);
      // startRun's own singleton, debounce or batch replaces the workflow's default one.
      const gate = startGate ?? startGateOf(def.options);
      if (gate !== undefined && key !== undefined) {
        // The line of starts is kept in the run's idempotency key: a run cannot hold two.
        throw invalidInput('startRun idempotencyKey', `cannot be combined with ${Object.keys(gate)[0]}`, key);
      }
      const now = clock.now();
      const requested = startOptions.deadline === undefined ? def.options.deadline : startOptions.deadline;
      const deadline =
        requested === undefined
          ? undefined
          : resolveDeadline(requested, now, startOptions.deadline === undefined ? `workflow ${JSON.stringify(def.name)} deadline` : 'startRun deadline');
      const newRun = {
        id: uuidv7(now),
        workflow: def.name,
        version: def.version,
        input: json,
        ...(key === undefined ? {} : { idempotencyKey: key }),
        // Never due later than its deadline, so recovery fails it then even if no worker started it.
        // Due at once when the store is the queue: the workers of other processes take it from there.
        wakeAt: earliest(mode === 'queued' && storeDispatch() ? now : now + timings.startGraceMs, deadline) as number,
        ...(deadline === undefined ? {} : { deadline }),
        ...(traceContext === undefined ? {} : { traceContext }),
        ...(priority === undefined || priority === 0 ? {} : { priority }),
        ...(tags === undefined || Object.keys(tags).length === 0 ? {} : { tags }),
      };
      const { run, created } = gate === undefined ? await rt.store.runs.create(newRun, now) : await startGated(rt, newRun, gate, now);
      if (created) {
        if (rt.lifecycle.runs) rt.lifecycle.run({ ...rt.lifecycle.base(run), type: 'run.created', createdAt: run.createdAt }, { input: run.input });
        if (mode === 'inline') {
          const execution = executeRun(rt, run.id).catch((error) =>
            rt.logger.error({ runId: run.id, workflow: run.workflow, version: run.version, workerId, err: error }, `Run ${run.id}: inline execution failed`),
          );
          inlineRuns.add(execution);
          void execution.finally(() => inlineRuns.delete(execution));
        } else {
          await rt.dispatchRun(run);
        }
      }
      return { id: run.id, created, result: (resultOptions) => engine.result(run.id, resultOptions) };
    },

    async result<O>(rawRunId: string, rawResultOptions?: { timeout?: Duration }): Promise<O> {
      const runId = checkRunId('result runId', rawRunId);
      const resultOptions = checkOptions('result options', rawResultOptions, ['timeout']) as { timeout?: Duration };
      const timeoutMs = resultOptions.timeout === undefined ? undefined : toMilliseconds(resultOptions.timeout, 'result timeout');
      const deadline = timeoutMs === undefined ? undefined : clock.now() + timeoutMs;
      let run = await waiter.wait(rt.store, clock, runId, { timeoutMs, pollIntervalMs });
      // A run that continued as new: its outcome is the last run's of the chain.
      for (let next = continuedAs(run.output); next !== undefined; next = continuedAs(run.output)) {
        run = await waiter.wait(rt.store, clock, next, { timeoutMs: deadline === undefined ? undefined : Math.max(0, deadline - clock.now()), pollIntervalMs });
      }
      return run.output as O;
    },

    sendEvent(rawRunId, rawEvent, payload, rawSendOptions) {
      return sendEvent(rt, checkPayload, rawRunId, rawEvent, payload, rawSendOptions);
    },

    request(rawRunId, rawRequest, payload, rawRequestOptions) {
      // biome-ignore lint/suspicious/noExplicitAny: the reply is the workflow's JSON, typed by the caller's definition
      return sendRequest({ rt, checkPayload, resultSignals, streamSignals }, rawRunId, rawRequest, payload, rawRequestOptions) as Promise<any>;
    },

    query(rawRunId, rawName) {
      // biome-ignore lint/suspicious/noExplicitAny: the value is the workflow's JSON, typed by the caller
      return queryRun(rt.store, rawRunId, rawName) as Promise<any>;
    },

    readStream(rawRunId, rawName, rawOptions) {
      return readStream(rt.store, clock, rawRunId, rawName, rawOptions);
    },

    async listStreams(rawRunId) {
      const runId = checkRunId('listStreams runId', rawRunId);
      const streams = streamsOf(rt.store, 'listStreams');
      if ((await rt.store.runs.get(runId)) === undefined) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
      // Requests' receipts and replies and exposed values live in streams too (decision 70); they are not the run's output.
      return (await streams.list(runId)).filter((s) => !isReservedStream(s.stream));
    },

    async cancel(rawRunId, rawCancelOptions) {
      const runId = checkRunId('cancel runId', rawRunId);
      const cancelOptions = checkOptions('cancel options', rawCancelOptions, ['reason']) as CancelOptions;
      const reason = cancelOptions.reason === undefined ? undefined : checkIdentifier('cancel reason', cancelOptions.reason, MAX_CANCEL_REASON);
      await cancelRun(runId, reason);
    },

    pause: (runId, pauseOptions) => pauseRun(pauseParts, runId, pauseOptions),
    resume: (runId) => resumeRun(pauseParts, runId),
    pauseWorkflow: (workflow, pauseOptions) => pauseWorkflow(pauseParts, workflow, pauseOptions),
    resumeWorkflow: (workflow) => resumeWorkflow(pauseParts, workflow),
    getWorkflowPause: (workflow) => getWorkflowPause(pauseParts, workflow),
    listWorkflowPauses: () => listWorkflowPauses(pauseParts),

    // Async, so a refused argument rejects like every other failure instead of throwing at the call.
    getRun: async (runId) => rt.store.runs.get(checkRunId('getRun runId', runId)),
    async listRuns(rawQuery) {
      const query = checkRunQuery(rawQuery);
      if (query.tags !== undefined && rt.store.runs.setTags === undefined) throw tagsUnsupported('listRuns tags', rt.store.name);
      return rt.store.runs.list(query);
    },
    findRun: async (workflow, idempotencyKey) =>
      rt.store.runs.findByIdempotencyKey(
        checkIdentifier('findRun workflow', workflow, IDENTIFIER_LIMITS.workflowName),
        checkIdentifier('findRun idempotencyKey', idempotencyKey, IDENTIFIER_LIMITS.idempotencyKey),
      ),
    retryRun: (runId, retryOptions) => retryRun(rt, runId, retryOptions),
    async forkRun(runId, forkOptions) {
      const run = await forkRun(rt, runId, forkOptions);
      return { id: run.id, created: true, result: (resultOptions) => engine.result(run.id, resultOptions) };
    },
    prune: (pruneOptions) => pruneRuns(rt, retention, pruneOptions),
    steps: async (runId) => rt.store.steps.load(checkRunId('steps runId', runId)),
    state: async (runId) => rt.store.state.get(checkRunId('state runId', runId)),

    async history(rawRunId) {
      const runId = checkRunId('history runId', rawRunId);
      const [steps, attempts] = await Promise.all([rt.store.steps.load(runId), rt.store.history.list(runId)]);
      const byKey = new Map(steps.map((s) => [s.key, s]));
      return attempts.map((a) => ({ ...a, stepName: byKey.get(a.stepKey)?.name ?? a.stepKey, kind: byKey.get(a.stepKey)?.kind ?? 'task' }));
    },

    async timeline(rawRunId) {
      const runId = checkRunId('timeline runId', rawRunId);
      const [run, steps, attempts, state] = await Promise.all([
        rt.store.runs.get(runId),
        rt.store.steps.load(runId),
        rt.store.history.list(runId),
        rt.store.state.get(runId),
      ]);
      if (!run) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
      return buildRunTimeline(run, steps, attempts, state);
    },

    async deleteRun(rawRunId, rawDeleteOptions) {
      const runId = checkRunId('deleteRun runId', rawRunId);
      const deleteOptions = checkOptions('deleteRun options', rawDeleteOptions, ['force']);
      const force = checkOptionalBoolean('deleteRun force', deleteOptions.force);
      const run = await rt.store.runs.get(runId);
      if (!run) return false;
      if (!isTerminalRunStatus(run.status) && !force) {
        throw new CairnError('RUN_ACTIVE', `Run ${runId} is ${run.status}; cancel it first or pass { force: true }`, { data: { runId, status: run.status } });
      }
      // A child deleted while running never ends on its own: its parent takes it as ended
      // (CHILD_FAILED, status 'deleted') now, and within a lease if this process dies after the
      // delete. A terminal child woke its parent when it ended.
      const active = !isTerminalRunStatus(run.status);
      if (active) await preWakeParent(rt, run.parent);
      const deleted = await rt.store.runs.delete(runId);
      if (deleted && active) await wakeParent(rt, run.parent);
      // A waiter of another process learns RUN_NOT_FOUND now rather than at its re-read.
      if (deleted && active) resultSignals.announce(runId);
      return deleted;
    },

    recover,

    bulk: (bulkOptions) => runBulk(bulkParts, bulkOptions),
    resumeBulk: (id, resumeOptions) => resumeBulk(bulkParts, id, resumeOptions),
    getBulk: (id) => getBulk(bulkParts, id),
    listBulk: (listOptions) => listBulk(bulkParts, listOptions),
  };
  const bulkParts: BulkParts = {
    rt,
    actors: {
      cancel: cancelRun,
      retry: (runId, reason) => retryRun(rt, runId, reason === undefined ? {} : { reason }),
      pause: (runId) => pauseRun(pauseParts, runId, undefined),
      resume: (runId) => resumeRun(pauseParts, runId),
      delete: (runId) => engine.deleteRun(runId),
    },
  };
  return engine;
}
