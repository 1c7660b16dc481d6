// An engine's own work loop: start() registers its versions and schedules, starts a queue worker
// per queue its workflows use, listens for wake-ups when the store is the queue between processes,
// and runs the recovery loop; stop() undoes it within a grace. Part of createEngine (engine.ts).
import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';
import type { WorkOptions } from '../queue/queue.js';
import { declareSchedule } from '../schedule/engine-schedules.js';
import type { createScheduleRunner } from '../schedule/schedule-runner.js';
import { checkOptionalBoolean, checkOptions } from './check-input.js';
import type { EngineParts } from './engine-parts.js';
import { executeRun } from './execution/execute-run.js';
import { executeStepJob } from './execution/execute-step-job.js';
import type { StepJob } from './execution/step-job.js';
import { PRUNE_BATCH, pruneRuns } from './operations/prune-runs.js';
import { type StartWait, untilReachable } from './outage.js';
import { settlesWithin } from './settles-within.js';
import { wakeUpHandlers } from './wakeups/wake-up-handlers.js';
import { WorkerRoster } from './wakeups/worker-roster.js';

const DEFAULT_STOP_GRACE_MS = 30_000;
// After abandoning, how long stop() still waits for the executions to wind down.
const ABANDON_WAIT_MS = 1_000;
// How often a busy listening worker says `here` again (WorkerRoster.announceDue): one signal per
// 30 s while it claims signalled runs, none while idle.
const ROSTER_ANNOUNCE_MS = 30_000;

/** What the work loop needs besides the engine's parts. */
export interface WorkerParts {
  readonly scheduleRunner: ReturnType<typeof createScheduleRunner>;
  /** Pauses the runs of a paused workflow that started elsewhere (decision 63). */
  sweepPausedWorkflow(workflow: string): Promise<unknown>;
}

/** `start`, `stop` and `recover` of an engine. */
export interface EngineWorkers {
  start(rawStartOptions?: unknown): Promise<void>;
  stop(rawStopOptions?: unknown): Promise<void>;
  /** One recovery pass: dispatches every due run; how many. */
  recover(): Promise<number>;
}

/** The work loop of the engine made of `parts`. */
export function engineWorkers(parts: EngineParts, extra: WorkerParts): EngineWorkers {
  const recover = () => recoverDue(parts);
  return {
    recover,
    start: (rawStartOptions) => startEngine(parts, extra, recover, rawStartOptions),
    stop: (rawStopOptions) => stopEngine(parts, rawStopOptions),
  };
}

/** One recovery pass: every due run is dispatched again (a lease expired, a wake-up was lost). */
async function recoverDue(parts: EngineParts): Promise<number> {
  const { rt, state } = parts;
  const { clock, workerId, recoveryIntervalMs } = parts.checked;
  const due = await rt.store.runs.findDue(clock.now(), 500);
  for (const run of due) {
    // A run signalled to another worker and still due: that worker is gone (or far behind).
    state.roster?.overdue(run.id, clock.now(), recoveryIntervalMs);
    await rt.dispatchRun(run);
    if (rt.lifecycle.recovery)
      rt.lifecycle.recovered({ type: 'recovery.dispatched', runId: run.id, workflow: run.workflow, reason: run.reason, workerId, at: clock.now() });
  }
  return due.length;
}

async function startEngine(parts: EngineParts, extra: WorkerParts, recover: () => Promise<number>, rawStartOptions: unknown): Promise<void> {
  const startOptions = checkOptions('start options', rawStartOptions, ['workers']) as { workers?: boolean };
  checkOptionalBoolean('start workers', startOptions.workers);
  const { state, queue, checked, rt } = parts;
  if (state.started) return;
  if (checked.strategy === 'shared-groups' && !queue.capabilities.groups) {
    throw new CairnError(
      'QUEUE_UNSUPPORTED',
      `Queue ${queue.name} has no job groups, which the 'shared-groups' strategy needs for fairness; use queueStrategy: 'per-workflow'`,
      {
        data: { queue: queue.name, strategy: checked.strategy },
      },
    );
  }
  // While the store or queue is unreachable, wait and retry (up to startTimeoutMs).
  state.startWait = new AbortController();
  const { clock, startTimeoutMs } = checked;
  const wait: StartWait = { clock, outage: parts.outage, timeoutMs: startTimeoutMs, deadline: clock.now() + startTimeoutMs, signal: state.startWait.signal };
  await declareAll(parts, wait);
  // Learns when the first schedule is due (and fires any due now) as part of starting.
  if (startOptions.workers !== false) await untilReachable('reading the schedules', wait, () => extra.scheduleRunner.pass());
  state.started = true;
  if (state.shutdown.signal.aborted) state.shutdown = new AbortController();
  state.withoutWorkers = startOptions.workers === false;
  if (state.withoutWorkers) return;
  try {
    await startQueueWorkers(parts, wait);
    await startListening(parts, wait, recover);
  } catch (error) {
    // A start that gave up leaves no worker running, so a later start() begins afresh.
    state.roster = undefined;
    await Promise.allSettled(state.workers.splice(0).map((worker) => worker.stop()));
    state.started = false;
    throw error;
  }
  // The paused workflows, so that first claims check them without a read (decision 63); a
  // failed read is retried by the recovery loop.
  await rt.workflowPauses
    .refresh(true)
    .catch((error: unknown) => rt.logger.warn({ workerId: checked.workerId, err: error }, 'reading the paused workflows failed'));
  state.recoveryLoop = new AbortController();
  void recoveryLoop(parts, extra, recover, state.recoveryLoop.signal);
}

/** Registers every workflow version and declares every schedule, waiting out an outage. */
async function declareAll(parts: EngineParts, wait: StartWait): Promise<void> {
  const { rt, checked } = parts;
  const { clock } = checked;
  for (const def of checked.registry.all()) {
    await untilReachable(`registering ${def.name}@${def.version}`, wait, () =>
      rt.store.versions.upsert(def.name, def.version, { description: def.options.description ?? null, tier: def.options.tier ?? null }, clock.now()),
    );
  }
  for (const def of checked.declaredSchedules.values()) {
    await untilReachable(`declaring schedule ${def.name}`, wait, () => declareSchedule(rt.store, def, clock.now()));
  }
}

/** One orchestrator and one step worker per queue the registered workflows use. */
async function startQueueWorkers(parts: EngineParts, wait: StartWait): Promise<void> {
  const { options, checked, queue, state, dispatch } = parts;
  const concurrency = options.concurrency ?? 10;
  const workOptions: WorkOptions = checked.strategy === 'shared-groups' ? { concurrency, groupConcurrency: options.groupConcurrency ?? 5 } : { concurrency };
  const orchestrator = orchestratorHandler(parts);
  const steps = stepHandler(parts);
  const seen = new Set<string>();
  for (const name of checked.registry.names()) {
    const queues = dispatch.queuesFor(name);
    if (!seen.has(queues.orchestrator))
      state.workers.push(
        await untilReachable(`starting a worker on ${queues.orchestrator}`, wait, () => queue.work(queues.orchestrator, orchestrator, workOptions)),
      );
    if (!seen.has(queues.step))
      state.workers.push(await untilReachable(`starting a worker on ${queues.step}`, wait, () => queue.work(queues.step, steps, workOptions)));
    seen.add(queues.orchestrator).add(queues.step);
  }
}

/** When the store is the queue between processes: listens for wake-ups and joins the roster. */
async function startListening(parts: EngineParts, wait: StartWait, recover: () => Promise<number>): Promise<void> {
  const { rt, wakeups, state, checked, outage } = parts;
  if (!parts.storeIsQueue || !wakeups.available) return;
  const members = new WorkerRoster(checked.workerId, checked.registry.names(), checked.clock.now());
  state.roster = members;
  const handlers = wakeUpHandlers({ rt, wakeups, roster: members, recover, recovered: () => outage.recovered(), running: () => state.started });
  state.stopListening = await untilReachable('listening for wake-ups', wait, () => wakeups.listen(handlers));
  await wakeups.announce('join', checked.workerId, checked.registry.names());
}

const orchestratorHandler = (parts: EngineParts) => async (job: { payload: Json }) => {
  const runId = (job.payload as { runId?: unknown })?.runId;
  if (typeof runId !== 'string') return;
  await executeRun(parts.rt, runId);
  parts.rt.faults.hit({ point: 'before-ack', runId });
};

const stepHandler = (parts: EngineParts) => async (job: { payload: Json }) => {
  const payload = job.payload as Partial<StepJob> | null;
  if (
    !payload ||
    typeof payload.runId !== 'string' ||
    typeof payload.key !== 'string' ||
    typeof payload.attempt !== 'number' ||
    typeof payload.workflow !== 'string'
  )
    return;
  await executeStepJob(parts.rt, payload as StepJob);
  parts.rt.faults.hit({ point: 'before-ack', runId: payload.runId, stepKey: payload.key });
};

/** The recovery loop: a pass every `recoveryIntervalMs` until stop(). */
async function recoveryLoop(parts: EngineParts, extra: WorkerParts, recover: () => Promise<number>, signal: AbortSignal): Promise<void> {
  const { rt, state, checked } = parts;
  const { workerId } = checked;
  // Runs this engine sent through the store before it started were signalled while nobody
  // here listened: one pass at once picks them up instead of one recovery interval later.
  if (state.sentWhileStopped) {
    state.sentWhileStopped = false;
    await recover().catch((error: unknown) => {
      if (!signal.aborted) rt.logger.error({ workerId, err: error }, 'recovery pass failed');
    });
  }
  while (!signal.aborted) {
    try {
      await checked.clock.sleep(checked.recoveryIntervalMs, signal);
      await recoveryPass(parts, extra, recover);
    } catch (error) {
      if (!signal.aborted) rt.logger.error({ workerId, err: error }, 'recovery pass failed');
    }
  }
}

/** One beat of the recovery loop: due runs, the roster, retention, schedules, paused workflows. */
async function recoveryPass(parts: EngineParts, extra: WorkerParts, recover: () => Promise<number>): Promise<void> {
  const { rt, state, checked, wakeups } = parts;
  const { registry, retention, clock, workerId } = checked;
  await recover();
  // A busy worker says `here` now and then, in case another dropped it (decision 40).
  if (state.roster?.announceDue(clock.now(), ROSTER_ANNOUNCE_MS)) await wakeups.announce('here', workerId, registry.names());
  // Retention: one small batch per pass, so a large backlog never stalls recovery.
  if (retention !== undefined && Object.keys(retention).length > 0) await pruneRuns(rt, retention, { limit: PRUNE_BATCH });
  // Due ticks are fired on the same beat, read only when one is due (the earliest due
  // time is known from the last read) or every DISCOVERY_MS: idle passes stay one request.
  await extra.scheduleRunner.passIfDue();
  // Paused workflows, re-read now and then: a run started in another process after a
  // workflow's pause is paused at its first claim here, or by this sweep (decision 63).
  for (const workflow of await rt.workflowPauses.refresh()) if (registry.current(workflow)) await extra.sweepPausedWorkflow(workflow);
  parts.outage.recovered();
}

async function stopEngine(parts: EngineParts, rawStopOptions: unknown): Promise<void> {
  const stopOptions = checkOptions('stop options', rawStopOptions, ['graceMs']) as { graceMs?: number };
  const graceMs = stopOptions.graceMs ?? parts.options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  if (typeof graceMs !== 'number' || Number.isNaN(graceMs) || graceMs < 0) {
    throw new CairnError('INVALID_INPUT', `stop: graceMs must be a number ≥ 0 (or Infinity), got ${String(graceMs)}`);
  }
  const { rt, state, checked, queue } = parts;
  const { clock, workerId } = checked;
  state.startWait?.abort();
  state.recoveryLoop?.abort();
  const listening = state.stopListening;
  state.stopListening = undefined;
  // The others take this worker's share of signalled runs at once.
  if (state.roster !== undefined) await parts.wakeups.announce('leave', workerId, []);
  state.roster = undefined;
  await listening?.().catch((error: unknown) => rt.logger.error({ workerId, err: error }, 'stopping the wake-up listener failed'));
  const drained = Promise.all([...state.workers.splice(0).map((w) => w.stop()), ...state.inlineRuns]).then(() => undefined);
  let finished = await settlesWithin(clock, drained, graceMs);
  if (!finished) {
    state.shutdown.abort(new CairnError('ENGINE_STOPPED', `engine stopped: in-flight work outlived the ${graceMs} ms grace period`));
    for (const execution of rt.executing.values()) execution.abandon(state.shutdown.signal.reason);
    // Abandoned executions end at once; a step body that ignores its signal is not waited for.
    finished = await settlesWithin(clock, drained, ABANDON_WAIT_MS);
  }
  if (parts.ownsQueue) await (finished ? queue.close() : settlesWithin(clock, queue.close(), ABANDON_WAIT_MS));
  // The completion signals of the runs that ended are sent; waiters still here poll from now on.
  await parts.resultSignals.close();
  await parts.streamSignals.close();
  // A stopped engine resumes nothing: its runs replay wherever they are claimed next.
  rt.sticky?.clear();
  state.started = false;
  state.withoutWorkers = false;
}
