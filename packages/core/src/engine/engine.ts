// createEngine: an engine assembled from named parts. The parts every call shares
// (engine-parts.ts), the work loop (engine-workers.ts), and the calls by responsibility: starting
// and reading runs, cancelling and deleting them (operations/), messages to running runs
// (messages/), pauses, retries, forks, retention, bulk operations, schedules, versions, the doctor.
import { codecStore } from '../codec/codec-store.js';
import { getBulk, listBulk, resumeBulk, runBulk, type BulkParts } from '../bulk/run-bulk.js';
import { createEngineSchedules } from '../schedule/engine-schedules.js';
import { createScheduleRunner } from '../schedule/schedule-runner.js';
import { checkEngineOptions } from './check-engine-options.js';
import type { Engine, EngineOptions } from './engine-contract.js';
import { assembleEngineParts, type EngineParts } from './engine-parts.js';
import { engineWorkers } from './engine-workers.js';
import { createPushedWork } from './execution/pushed-work.js';
import { queryRun } from './messages/query-run.js';
import { sendEvent } from './messages/send-event.js';
import { sendRequest } from './messages/send-request.js';
import { readStream } from './messages/stream-reader.js';
import { cancel, cancelRun } from './operations/cancel-run.js';
import { deleteRun } from './operations/delete-run.js';
import { runDoctor } from './operations/doctor/run-doctor.js';
import { createEngineVersions } from './operations/engine-versions.js';
import { forkRun } from './operations/fork-run.js';
import {
  getWorkflowPause,
  listWorkflowPauses,
  pauseRun,
  pauseWorkflow,
  resumeRun,
  resumeWorkflow,
  sweepPausedWorkflow,
  type PauseParts,
} from './operations/pause-runs.js';
import { pruneRuns } from './operations/prune-runs.js';
import { retryRun } from './operations/retry-run.js';
import { runReads } from './operations/run-reads.js';
import { startRun } from './operations/start-run.js';

export type { CancelOptions, Engine, EngineOptions, HistoryEntry, RunHandle, StartOptions } from './engine-contract.js';

/** Builds an engine over a store and a queue. Nothing runs until `start()`. */
export function createEngine(given: EngineOptions): Engine {
  // With a codec, the engine runs on the store seen through it: every payload is encoded on its way in and decoded on its way out.
  const options = given.codec === undefined || given.store === undefined ? given : { ...given, store: codecStore(given.store, given.codec) };
  const parts = assembleEngineParts(options, checkEngineOptions(options));
  const { rt, checked } = parts;
  // A pause reaches an execution of another process by the signal a cancel uses ('abort': it reads
  // the run and observes what it finds), else by that execution's next lease renewal.
  const pauseParts: PauseParts = { rt, tellElsewhere: (run) => parts.wakeups.signal(run.id, run.workflow, 'abort') };
  const scheduleRunner = createScheduleRunner({
    store: rt.store,
    clock: checked.clock,
    logger: rt.logger,
    workerId: checked.workerId,
    declared: checked.declaredSchedules,
    runs: (workflow) => checked.registry.current(workflow) !== undefined,
    startRun: async (workflow, input, idempotencyKey) => (await engine.startRun(workflow, input, { idempotencyKey })).id,
  });
  const workers = engineWorkers(parts, { scheduleRunner, sweepPausedWorkflow: (workflow) => sweepPausedWorkflow(pauseParts, workflow) });
  const engine: Engine = {
    workerId: checked.workerId,
    schedules: schedulesOf(parts, scheduleRunner),
    versions: createEngineVersions({ store: rt.store, clock: checked.clock }),
    pushed: createPushedWork(rt, parts.pushedSteps),
    doctor: (doctorOptions) => doctorOf(parts, doctorOptions),
    get turnsInProgress() {
      return rt.turnsInProgress.count;
    },
    get keptExecutions() {
      return { executions: rt.sticky?.size ?? 0, calls: rt.sticky?.calls ?? 0 };
    },
    start: workers.start,
    stop: workers.stop,
    recover: workers.recover,
    startRun: (workflow, input, startOptions) => startRun(parts, engine.result, workflow, input, startOptions),
    ...runReads(parts),
    ...messages(parts),
    cancel: (runId, cancelOptions) => cancel(parts, runId, cancelOptions),
    deleteRun: (runId, deleteOptions) => deleteRun(parts, runId, deleteOptions),
    retryRun: (runId, retryOptions) => retryRun(rt, runId, retryOptions),
    async forkRun(runId, forkOptions) {
      const run = await forkRun(rt, runId, forkOptions);
      return { id: run.id, created: true, result: (resultOptions) => engine.result(run.id, resultOptions) };
    },
    prune: (pruneOptions) => pruneRuns(rt, checked.retention, pruneOptions),
    pause: (runId, pauseOptions) => pauseRun(pauseParts, runId, pauseOptions),
    resume: (runId) => resumeRun(pauseParts, runId),
    pauseWorkflow: (workflow, pauseOptions) => pauseWorkflow(pauseParts, workflow, pauseOptions),
    resumeWorkflow: (workflow) => resumeWorkflow(pauseParts, workflow),
    getWorkflowPause: (workflow) => getWorkflowPause(pauseParts, workflow),
    listWorkflowPauses: () => listWorkflowPauses(pauseParts),
    bulk: (bulkOptions) => runBulk(bulkParts, bulkOptions),
    resumeBulk: (id, resumeOptions) => resumeBulk(bulkParts, id, resumeOptions),
    getBulk: (id) => getBulk(bulkParts, id),
    listBulk: (listOptions) => listBulk(bulkParts, listOptions),
  };
  const bulkParts: BulkParts = {
    rt,
    actors: {
      cancel: (runId, reason) => cancelRun(parts, runId, reason),
      retry: (runId, reason) => retryRun(rt, runId, reason === undefined ? {} : { reason }),
      pause: (runId) => pauseRun(pauseParts, runId, undefined),
      resume: (runId) => resumeRun(pauseParts, runId),
      delete: (runId) => engine.deleteRun(runId),
    },
  };
  return engine;
}

/** `engine.schedules`: declared and operator-made schedules, fired by the work loop's runner. */
function schedulesOf(parts: EngineParts, runner: ReturnType<typeof createScheduleRunner>): Engine['schedules'] {
  const { rt, checked } = parts;
  return createEngineSchedules({
    store: rt.store,
    clock: checked.clock,
    runner,
    runs: (workflow) => checked.registry.current(workflow) !== undefined,
    computes: (name) => checked.declaredSchedules.get(name)?.computeInput !== undefined,
    maxPayloadBytes: checked.maxPayloadBytes,
  });
}

/** `engine.doctor`: the store and the engine's own checks (operations/doctor/). */
function doctorOf(parts: EngineParts, doctorOptions: Parameters<Engine['doctor']>[0]): ReturnType<Engine['doctor']> {
  const { rt } = parts;
  return runDoctor(
    { store: rt.store, dispatchRun: rt.dispatchRun, dispatchStep: rt.dispatchStep, reachesWorkers: () => !parts.ownsQueue || parts.state.workers.length > 0 },
    parts.checked.clock.now(),
    doctorOptions,
  );
}

/** Messages to a running run: events, requests, queries, stream reads (messages/). */
function messages(parts: EngineParts): Pick<Engine, 'sendEvent' | 'request' | 'query' | 'readStream'> {
  const { rt, checkPayload, resultSignals, streamSignals } = parts;
  return {
    sendEvent: (runId, event, payload, sendOptions) => sendEvent(rt, checkPayload, runId, event, payload, sendOptions),
    request(runId, request, payload, requestOptions) {
      const reply = sendRequest({ rt, checkPayload, resultSignals, streamSignals }, runId, request, payload, requestOptions);
      // biome-ignore lint/suspicious/noExplicitAny: the reply is the workflow's JSON, typed by the caller's definition
      return reply as Promise<any>;
    },
    query(runId, name) {
      // biome-ignore lint/suspicious/noExplicitAny: the value is the workflow's JSON, typed by the caller
      return queryRun(rt.store, runId, name) as Promise<any>;
    },
    readStream: (runId, name, readOptions) => readStream(rt.store, parts.checked.clock, runId, name, readOptions),
  };
}
