import { CairnError } from '../../errors/cairn-error.js';
import type { RunRecord, RunTransition } from '../../model/run.js';
import type { StepRecord } from '../../model/step.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { Execution, type Outcome } from './execution.js';
import { cancelCheckMs } from './cancel-watch.js';
import { cancelledError, deadlineExceededError } from './outcome.js';
import { earliest } from './run-deadline.js';
import { mayPauseAtFirstClaim, pausedAtFirstClaim } from '../operations/pause-runs.js';
import { preWakeParent, wakeParent } from '../wakeups/wake-parent.js';
import { enterFlow, type RunSlot } from '../flow/run-slot.js';
import { singletonTurn, wakeSingletonSuccessor } from '../flow/singleton.js';
import { windowTurn } from '../flow/start-windows.js';
import { lifecycleError } from '../../observe/lifecycle.js';
import { checkTraceContext } from '../../observe/check-trace-context.js';
import type { RunLifecycleEvent } from '../../observe/lifecycle-events.js';

// Why the lease renewal and the deadline watch stop: nobody sees it (their sleeps' rejections are ignored).
const EXECUTION_OVER = Symbol('execution over');

// A run woken while it executed is replayed again in place, but never endlessly in one call.
const MAX_IMMEDIATE_REPLAYS = 50;

/**
 * Executes a run in this process: claim, replay, record the outcome. Never throws for
 * expected races (another worker holds the lease, the run already ended); a simulated crash from a
 * fault point propagates so the job is not acknowledged.
 */
export async function executeRun(rt: EngineRuntime, runId: string): Promise<void> {
  const local = rt.executing.get(runId);
  if (local) {
    // Already executing here: ask for another pass instead of racing ourselves.
    rt.rerun.add(runId);
    return;
  }
  // The execution in flight, held by the entry in `rt.executing` through this slot, which is
  // emptied when the run leaves: a long-lived Map keeps every table it outgrew or compacted, with
  // the entries it had then, linked to the next one until a major garbage collection. An entry
  // that held the execution itself kept each overlapping run's whole execution alive through every
  // scavenge (issue 18: ~3.4 KB promoted per one-step run with 2 in flight, ~7.9 KB with 16).
  const slot = new ExecutingSlot();
  rt.executing.set(runId, slot);
  try {
    for (let pass = 0; pass < MAX_IMMEDIATE_REPLAYS; pass++) {
      if (rt.shutdown().aborted) return;
      rt.rerun.delete(runId);
      const again = await executeOnce(rt, runId, slot);
      if (!again && !rt.rerun.has(runId)) return;
    }
    await rt.dispatchRun((await rt.store.runs.get(runId)) ?? { id: runId, workflow: '' });
  } finally {
    slot.current = undefined;
    rt.executing.delete(runId);
    rt.rerun.delete(runId);
    rt.executionLeft(runId);
  }
}

/**
 * The entry of a run executing here in `rt.executing`: what other parts of the engine tell the
 * execution in flight, if any. One object with methods, not closures: every run makes one, and
 * what a run holds while it overlaps others reaches the old generation.
 */
class ExecutingSlot {
  current: Execution | undefined = undefined;

  observeCancel(error: CairnError): void {
    this.current?.observeCancel(error);
  }

  abandon(error: unknown): void {
    this.current?.crash(error);
  }

  observePause(): void {
    this.current?.observePause();
  }
}

/**
 * What a push (`executePushedRun`) asks of one claim: stop starting primitives at `yieldAt`, and
 * hear of the claim and of the run as its outcome was written.
 */
export interface PushWatch {
  readonly yieldAt: number;
  claimed(): void;
  recorded(run: RunRecord): void;
}

/** How a push's execution of a run ended (see `PushedRunResult` in the engine contract). */
export interface PushedRun {
  /** The run was claimed at least once by this push. */
  claimed: boolean;
  /** Another execution of the run in this process already held it (the push joined it). */
  joined: boolean;
  /** The run as its last outcome was written by this push, if one was. */
  after: RunRecord | undefined;
}

/**
 * Executes a run for a push: as `executeRun` (claim, replay, record; a wake-up during the
 * execution replays it again at once), but it starts no primitive at or after `yieldAt`: an
 * execution still going then stops at its next primitive boundary and the run is left due at once,
 * for the next push. Never dispatches the run itself.
 */
export async function executePushedRun(rt: EngineRuntime, runId: string, yieldAt: number): Promise<PushedRun> {
  const result: PushedRun = { claimed: false, joined: false, after: undefined };
  if (rt.executing.has(runId)) {
    // Executing here already (a duplicate push): that execution replays once more when it ends.
    rt.rerun.add(runId);
    result.joined = true;
    return result;
  }
  const slot = new ExecutingSlot();
  rt.executing.set(runId, slot);
  const watch: PushWatch = {
    yieldAt,
    claimed: () => {
      result.claimed = true;
    },
    recorded: (run) => {
      result.after = run;
    },
  };
  try {
    for (let pass = 0; pass < MAX_IMMEDIATE_REPLAYS && rt.clock.now() < yieldAt; pass++) {
      rt.rerun.delete(runId);
      const again = await executeOnce(rt, runId, slot, watch);
      if (!again && !rt.rerun.has(runId)) break;
    }
    return result;
  } finally {
    slot.current = undefined;
    rt.executing.delete(runId);
    rt.rerun.delete(runId);
    rt.executionLeft(runId);
  }
}

/**
 * One claim + replay. Resolves true when the run should be replayed again right away. A kept
 * execution taken for this claim is discarded on every path that does not resume it.
 */
async function executeOnce(rt: EngineRuntime, runId: string, slot: ExecutingSlot, push?: PushWatch): Promise<boolean> {
  const { store, clock } = rt;
  const run = await store.runs.claim(runId, rt.workerId, rt.timings.leaseMs, clock.now());
  if (!run) return false;
  push?.claimed();
  const claimedAt = clock.now();
  // The execution this process kept when the run last suspended, if this claim may resume it
  // (decision 64); taken out before anything can throw, so a crash here leaves nothing kept.
  const kept = rt.sticky?.take(run, claimedAt) as Execution | undefined;
  // One async function per claim, not one inside another: its frame lives as long as the run executes.
  try {
    rt.faults.hit({ point: 'after-claim', runId });
    if (mayPauseAtFirstClaim(rt, run) && (await pausedAtFirstClaim(rt, run))) return false;
    const def = rt.registry.find(run.workflow, run.version);
    if (!def) {
      kept?.discard();
      // A worker from another deploy may know this version: step aside and let recovery retry.
      rt.logger.warn(
        { runId, workflow: run.workflow, version: run.version, workerId: rt.workerId },
        `Run ${runId}: workflow ${run.workflow} version ${run.version} is not registered on this worker`,
      );
      await store.runs.transition(
        runId,
        run.fence,
        { from: ['running'], to: 'waiting', wakeAt: earliest(clock.now() + rt.timings.leaseMs, run.deadline) as number },
        clock.now(),
      );
      return false;
    }
    // A kept execution knows the history: nothing of it is read again.
    const steps = kept === undefined ? await store.steps.load(runId) : undefined;
    const recorded = kept === undefined ? (steps as StepRecord[]).length : kept.calls;
    // A singleton run starts (or ends) only after the run ahead of it in its key's line has ended.
    const turn = await singletonTurn(rt, run, recorded);
    if (turn.wait) {
      kept?.discard();
      await waitForSlot(rt, run, turn.wakeAt);
      return false;
    }
    // A debounce or batch run starts once its window closed, with the input its window decided.
    const window = kept === undefined ? await windowTurn(rt, run) : undefined;
    if (window?.wait === true) {
      await waitForSlot(rt, run, window.wakeAt);
      return false;
    }
    // A limited workflow's run executes only with its slots; without them it waits, lease given back.
    const flow = await enterFlow(rt, run, def, recorded);
    if (flow.kind === 'wait') {
      kept?.discard();
      await waitForSlot(rt, run, flow.wakeAt);
      return false;
    }
    let executionTrace: Record<string, string> | undefined;
    if (rt.lifecycle.runs) {
      // The first claim of a run has fence 1; every later one (after a suspension, or taking over
      // from a lost worker) a higher one. A limited run may have been claimed and sent back to wait
      // for its slot before: it starts when it first executes with nothing recorded.
      const first = run.fence === 1 || ((flow.kind === 'fail' || flow.limited || run.idempotencyKey?.startsWith('\u0001') === true) && recorded === 0);
      const base = rt.lifecycle.base(run);
      const message: RunLifecycleEvent & { executionTraceContext?: Record<string, string> } = first
        ? { ...base, type: 'run.started', fence: run.fence, createdAt: run.createdAt, queueWaitMs: base.at - run.createdAt }
        : { ...base, type: 'run.resumed', fence: run.fence, createdAt: run.createdAt };
      rt.lifecycle.run(message);
      try {
        executionTrace = checkTraceContext('executionTraceContext', message.executionTraceContext);
      } catch {
        // A subscriber's malformed context is ignored: observing must never fail a run.
      }
    }
    if (flow.kind === 'fail') {
      kept?.discard();
      return record(rt, run, { kind: 'failed', error: flow.error }, claimedAt, undefined, Infinity);
    }
    if (push !== undefined && clock.now() >= push.yieldAt) {
      // The push's budget ran out before the execution could start (a slow claim or history read):
      // it starts nothing and gives the run back, due at once, for the next push.
      kept?.discard();
      const heldUntil = run.lease?.expiresAt ?? claimedAt + rt.timings.leaseMs;
      return record(rt, run, { kind: 'suspended', wakeAt: clock.now(), reasons: ['budget'] }, claimedAt, flow.slot, heldUntil, undefined, push);
    }
    const execution =
      kept ?? new Execution(rt, window === undefined || window.input === run.input ? run : { ...run, input: window.input }, steps as StepRecord[], def);
    const renewal = keepLease(rt, run, execution, flow.slot);
    const deadline = watchDeadline(rt, run, execution);
    const budget = push === undefined ? undefined : watchBudget(rt, execution, push.yieldAt);
    let outcome: Outcome;
    try {
      slot.current = execution;
      // Set after `resume` has taken the new claim's run (and its trace context) in a kept execution.
      if (kept === undefined) {
        if (executionTrace !== undefined) execution.traceContext = executionTrace;
        outcome = await execution.start();
      } else {
        const resumed = execution.resume(run);
        if (executionTrace !== undefined) execution.traceContext = executionTrace;
        outcome = await resumed;
      }
    } finally {
      // With a reason: `abort()` without one builds a DOMException (with its stack) per run.
      renewal.abort(EXECUTION_OVER);
      deadline.abort(EXECUTION_OVER);
      budget?.abort(EXECUTION_OVER);
    }
    return await record(rt, run, outcome, claimedAt, flow.slot, execution.leaseHeldUntil, execution, push);
  } catch (error) {
    kept?.discard();
    throw error;
  }
}

/**
 * A run refused a slot: its lease is given back (fenced) and it waits until `wakeAt`, dispatched
 * for then, so a lost wake-up costs a bounded delay, never a stuck run.
 */
async function waitForSlot(rt: EngineRuntime, run: RunRecord, wakeAt: number): Promise<void> {
  const { store, clock } = rt;
  try {
    await store.runs.transition(run.id, run.fence, { from: ['running'], to: 'waiting', wakeAt }, clock.now());
  } catch (error) {
    if (CairnError.is(error, 'LEASE_LOST') || CairnError.is(error, 'RUN_CONFLICT') || CairnError.is(error, 'RUN_NOT_FOUND')) return;
    throw error;
  }
  await rt.dispatchRun(run, Math.max(1, wakeAt - clock.now()));
}

/**
 * Writes the outcome of an execution (claimed at `claimedAt`), and publishes it. `slot`: the
 * run's concurrency slot, given up before the write while the lease still holds (`leaseHeldUntil`),
 * its next waiter woken after. `execution` is handed over: kept (a recorded suspension) or discarded.
 */
async function record(
  rt: EngineRuntime,
  run: RunRecord,
  outcome: Outcome,
  claimedAt: number,
  slot: RunSlot | undefined,
  leaseHeldUntil: number,
  execution?: Execution,
  push?: PushWatch,
): Promise<boolean> {
  const { store, clock } = rt;
  // A suspension this process keeps (once it is recorded), ready for the run's next claim; every
  // other outcome, or a suspension not recorded, ends the execution for good.
  let handed = false;
  try {
    if (outcome.kind === 'crashed') {
      if (CairnError.is(outcome.error, 'ENGINE_STOPPED')) {
        // Abandoned by engine.stop(): hand the run back now, so another worker resumes it at once
        // instead of after the lease. Fenced: it fails harmlessly if the lease is gone already.
        await releaseSlot(rt, slot, leaseHeldUntil);
        await store.runs.transition(run.id, run.fence, { from: ['running'], to: 'waiting', wakeAt: clock.now() }, clock.now()).catch(() => undefined);
        await slot?.wakeNext();
        return false;
      }
      if (CairnError.is(outcome.error, 'LEASE_LOST')) leaseLost(rt, run, outcome.error);
      if (!isExpectedCrash(outcome.error))
        rt.logger.error(
          { runId: run.id, workflow: run.workflow, version: run.version, workerId: rt.workerId, err: outcome.error },
          `Run ${run.id}: execution abandoned`,
        );
      if (isSimulatedCrash(outcome.error)) throw outcome.error;
      return false;
    }
    let transition: RunTransition;
    if (outcome.kind === 'suspended') {
      transition = { from: ['running'], to: 'waiting' };
      // A run with a deadline wakes no later than it, so the deadline is enforced by whichever
      // worker claims it then, even if no worker holds the run when it passes.
      const wakeAt = earliest(outcome.wakeAt, run.deadline);
      if (wakeAt !== undefined) transition.wakeAt = wakeAt;
    } else if (outcome.kind === 'completed') {
      transition = { from: ['running'], to: 'completed' };
      if (outcome.output !== undefined) transition.output = outcome.output;
    } else if (outcome.kind === 'failed' || outcome.kind === 'cancelled') {
      transition = { from: ['running'], to: outcome.kind, error: outcome.error };
    } else {
      return false;
    }
    rt.faults.hit({ point: 'before-checkpoint', runId: run.id });
    await releaseSlot(rt, slot, leaseHeldUntil);
    // A child's end: its parent is due within a lease whatever happens after this write (a run
    // without a parent makes no request here).
    if (transition.to !== 'waiting') await preWakeParent(rt, run.parent);
    let after: RunRecord;
    try {
      after = await store.runs.transition(run.id, run.fence, transition, clock.now());
    } catch (error) {
      if (CairnError.is(error, 'LEASE_LOST')) leaseLost(rt, run, error);
      if (CairnError.is(error, 'LEASE_LOST') || CairnError.is(error, 'RUN_CONFLICT') || CairnError.is(error, 'RUN_NOT_FOUND')) return false;
      throw error;
    }
    rt.faults.hit({ point: 'after-checkpoint', runId: run.id });
    push?.recorded(after);
    if (after.status === 'waiting' && execution !== undefined) {
      handed = true;
      rt.sticky?.keep(run.id, execution);
    }
    await slot?.wakeNext();
    if (rt.lifecycle.runs) published(rt, run, after, outcome, claimedAt);
    if (after.status === 'waiting') {
      if (after.wakeAt === undefined) return false;
      const delay = after.wakeAt - clock.now();
      if (delay <= 0) return true;
      await rt.dispatchRun(run, delay);
      return false;
    }
    rt.notifyFinished(after);
    if (after.idempotencyKey !== undefined) await wakeSingletonSuccessor(rt, after);
    // The parent waits for this outcome without a timer of its own (the pre-wake above bounds a lost wake-up): wake it now.
    await wakeParent(rt, after.parent);
    return false;
  } finally {
    if (!handed) execution?.discard();
  }
}

// Past the lease another worker may hold the run, and this same holder's slot: leave it be then.
async function releaseSlot(rt: EngineRuntime, slot: RunSlot | undefined, leaseHeldUntil: number): Promise<void> {
  if (slot !== undefined && rt.clock.now() < leaseHeldUntil) await slot.release();
}

/**
 * Fails the execution with DEADLINE_EXCEEDED when the run's deadline passes: at once when it has
 * passed already (the claim path: a run found past its deadline is failed, its children cancelled),
 * else by a timer on this worker's clock, which aborts every running inline body at the deadline.
 */
function watchDeadline(rt: EngineRuntime, run: RunRecord, execution: Execution): AbortController {
  const controller = new AbortController();
  const { deadline } = run;
  if (deadline === undefined) return controller;
  const left = deadline - rt.clock.now();
  if (left <= 0) {
    execution.observeCancel(deadlineExceededError(run.id, deadline));
    return controller;
  }
  rt.clock.sleep(left, controller.signal).then(
    () => execution.observeCancel(deadlineExceededError(run.id, deadline)),
    () => undefined,
  );
  return controller;
}

/**
 * Stops the execution at the next primitive boundary when a push's budget nears (`yieldAt`), by a
 * timer on this worker's clock, which fires after the execution started (an execution whose
 * budget ran out before it started is not started: see `executeOnce`).
 */
function watchBudget(rt: EngineRuntime, execution: Execution, yieldAt: number): AbortController {
  const controller = new AbortController();
  rt.clock.sleep(Math.max(0, yieldAt - rt.clock.now()), controller.signal).then(
    () => execution.observeYield(),
    () => undefined,
  );
  return controller;
}

/**
 * Renews the lease every third of its length while the execution runs, and the run's concurrency
 * slot with it; observes cancellation and pauses.
 * A store error during a renewal is not a lost lease: the lease still holds until the time the
 * last successful claim or renewal gave it, so the renewal is retried (at a quarter of the time
 * left, at least 10 ms apart) and the execution goes on; every write it makes is fenced anyway.
 * It is abandoned when the lease is lost for sure (`LEASE_LOST`, the run gone or ended) or when
 * the time it held runs out without a renewal.
 */
function keepLease(rt: EngineRuntime, run: RunRecord, execution: Execution, slot: RunSlot | undefined): AbortController {
  const controller = new AbortController();
  const every = cancelCheckMs(rt.timings);
  let heldUntil = run.lease?.expiresAt ?? rt.clock.now() + rt.timings.leaseMs;
  void (async () => {
    let delay = every;
    while (!controller.signal.aborted) {
      try {
        await rt.clock.sleep(delay, controller.signal);
      } catch {
        return;
      }
      const now = rt.clock.now();
      try {
        const renewed = await rt.store.runs.renew(run.id, run.fence, rt.timings.leaseMs, now);
        // The concurrency slot lives as long as the lease; a slot taken over is a lease lost.
        if (slot?.held === true && !(await slot.renew(now + rt.timings.leaseMs, now))) {
          execution.crash(
            new CairnError('LEASE_LOST', `Run ${run.id}: its concurrency slot (${slot.key}) was taken over after it expired`, { data: { runId: run.id } }),
          );
          return;
        }
        heldUntil = now + rt.timings.leaseMs;
        execution.leaseHeldUntil = heldUntil;
        delay = every;
        if (renewed.cancelRequested) execution.observeCancel(cancelledError(run.id, renewed.cancelReason));
        if (renewed.paused !== undefined) execution.observePause();
      } catch (error) {
        if (controller.signal.aborted) return;
        const left = heldUntil - rt.clock.now();
        delay = Math.min(every, Math.max(10, Math.floor(left / 4)));
        if (CairnError.is(error, 'STORE_ERROR') && delay < left) continue;
        execution.crash(error);
        return;
      }
    }
  })();
  return controller;
}

/** Publishes the outcome an execution just wrote (`after`: the run as written). */
function published(rt: EngineRuntime, run: RunRecord, after: RunRecord, outcome: Outcome, claimedAt: number): void {
  const base = rt.lifecycle.base(run);
  const durationMs = base.at - claimedAt;
  if (outcome.kind === 'suspended') {
    rt.lifecycle.run({
      ...base,
      type: 'run.suspended',
      fence: run.fence,
      reasons: outcome.reasons,
      ...(after.wakeAt === undefined ? {} : { wakeAt: after.wakeAt }),
      durationMs,
    });
    return;
  }
  if (outcome.kind !== 'completed' && outcome.kind !== 'failed' && outcome.kind !== 'cancelled') return;
  const ended = { ...base, type: `run.${outcome.kind}` as const, fence: run.fence, durationMs, totalMs: base.at - run.createdAt, createdAt: run.createdAt };
  rt.lifecycle.run(
    outcome.kind === 'completed' ? ended : { ...ended, error: lifecycleError(outcome.error) },
    outcome.kind === 'completed' && outcome.output !== undefined ? { output: outcome.output } : undefined,
  );
}

function leaseLost(rt: EngineRuntime, run: RunRecord, error: CairnError): void {
  if (rt.lifecycle.runs) rt.lifecycle.run({ ...rt.lifecycle.base(run), type: 'run.lease-lost', fence: run.fence, error: lifecycleError(error) });
}

/** A crash thrown by a fault injector (see `@cairn/core/testing`). */
export function isSimulatedCrash(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'SimulatedCrash';
}

function isExpectedCrash(error: unknown): boolean {
  return isSimulatedCrash(error) || CairnError.is(error, 'LEASE_LOST') || CairnError.is(error, 'RUN_NOT_FOUND');
}
