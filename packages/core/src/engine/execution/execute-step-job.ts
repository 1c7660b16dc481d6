import { withHandlerInput } from '../flow/start-windows.js';
import { takeStepSlot } from '../flow/step-rate-gate.js';
import { CairnError } from '../../errors/cairn-error.js';
import { toErrorRecord } from '../../errors/error-record-codec.js';
import { isTerminalRunStatus } from '../../model/run.js';
import type { Json } from '../../model/json.js';
import type { StepTransition } from '../../model/step.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { Execution } from './execution.js';
import { runStepBody } from './run-step-body.js';
import type { StepJob } from './step-job.js';
import { stepOutputJson } from './step-output.js';
import { decideRetry, type RetryDecision } from '../define/retry-policy.js';
import { cancelCheckMs, stopReason, watchRun } from './cancel-watch.js';
import { lifecycleError } from '../../observe/lifecycle.js';

/**
 * Runs one attempt of a queued step on a step worker. The worker holds no run lease: it starts the
 * attempt with a compare-and-set (scheduled → running, same attempt), so of two deliveries of one
 * job only one runs the body, and a result for an attempt the orchestrator declared abandoned is
 * refused by the same compare-and-set. It then wakes the run so the orchestrator continues.
 *
 * While the body runs, the worker watches its run (`watchRun`): at the run's deadline, or at the
 * first read (every third of the lease) that finds it cancelled, ended or deleted, the body's
 * signal aborts with DEADLINE_EXCEEDED / CANCELLED (with the cancel's reason), and the attempt's
 * result is not recorded: the orchestrator ends the run. It also holds the attempt
 * (`holdAttempt`), so that the attempt of a worker that died counts as abandoned within a lease.
 */
export async function executeStepJob(rt: EngineRuntime, job: StepJob): Promise<void> {
  const { store, clock } = rt;
  const run = await store.runs.get(job.runId);
  // A cancel requested before the attempt starts is observed here, at the step boundary: the
  // orchestrator (dispatched by the cancel) ends the run; the step stays scheduled.
  if (!run || isTerminalRunStatus(run.status) || stopReason(run, job.runId, clock.now())) return;
  const def = rt.registry.find(run.workflow, run.version);
  if (!def) return; // another deploy's worker (or the dispatch backstop) will handle it
  const steps = await store.steps.load(job.runId);
  const step = steps.find((s) => s.key === job.key);
  if (step?.status !== 'scheduled' || step.attempt !== job.attempt) return; // duplicate or stale job
  // The body is a closure inside the handler: replay the handler (without writing) until it asks for this step.
  const probe = await new Execution(rt, await withHandlerInput(rt.store, run), steps, def, job.key).start();
  const from = { status: ['scheduled' as const], attempt: step.attempt };
  if (probe.kind !== 'probe-hit') {
    const error = toErrorRecord(new CairnError('NON_DETERMINISM', `Run ${job.runId}: replay never reached queued step ${JSON.stringify(job.key)}`));
    await finish(rt, job, { key: job.key, from, to: { status: 'failed', error, wakeAt: null } });
    return;
  }
  if (probe.rate !== undefined) {
    // The step's rate limit is taken where its body runs, before the attempt starts. A slot that
    // frees late: the job comes back then (the step stays scheduled; no worker is held meanwhile).
    const { wakeAt } = await takeStepSlot(rt, job.runId, probe.rate, rt.shutdown());
    if (wakeAt !== undefined) {
      await rt.dispatchStep(job, wakeAt - clock.now());
      return;
    }
  }
  const deadlineAt = clock.now() + (probe.timeoutMs ?? rt.timings.queuedStepTimeoutMs);
  const held = heldUntil(rt, deadlineAt);
  try {
    await store.steps.transition(
      job.runId,
      null,
      { key: job.key, from, to: { status: 'running', wakeAt: held }, startAttempt: { worker: rt.workerId } },
      clock.now(),
    );
  } catch (error) {
    if (CairnError.is(error, 'STEP_CONFLICT') || CairnError.is(error, 'RUN_CONFLICT')) return; // someone else started it, or the run ended
    throw error;
  }
  // Aborted by engine.stop() (after its grace period), by cancellation, or at the run's deadline.
  const stop = new AbortController();
  const onShutdown = () => stop.abort(rt.shutdown().reason);
  if (rt.shutdown().aborted) onShutdown();
  else rt.shutdown().addEventListener('abort', onShutdown, { once: true });
  const watch = watchRun(rt, run, stop);
  const heartbeat = holdAttempt(rt, job, step.attempt, held, deadlineAt);
  // Stopped (engine.stop(), a cancel, the deadline): the result will not be recorded, so the attempt
  // is not held either; it counts as abandoned within a lease, as after a crash.
  if (stop.signal.aborted) heartbeat.abort();
  else stop.signal.addEventListener('abort', () => heartbeat.abort(), { once: true });
  const lifecycle = rt.lifecycle;
  const startedAt = clock.now();
  // The scheduled record was written at the dispatch: its age is the time the job waited.
  // Carried by the job: the attempt belongs to the trace of the execution that dispatched it.
  const traced = job.traceContext !== undefined && typeof job.traceContext === 'object' ? { ...run, traceContext: job.traceContext } : run;
  if (lifecycle.steps)
    lifecycle.step({ ...lifecycle.stepBase(traced, job.key, step.attempt, true), type: 'step.started', queueWaitMs: Math.max(0, startedAt - step.updatedAt) });
  let result: Awaited<ReturnType<typeof runStepBody>>;
  try {
    result = await runStepBody(clock, probe.fn, { runId: job.runId, key: job.key, attempt: step.attempt }, probe.timeoutMs, stop.signal);
  } finally {
    watch.abort();
    heartbeat.abort();
    rt.shutdown().removeEventListener('abort', onShutdown);
  }
  // Stopped by engine.stop() mid-attempt: record nothing. The attempt, no longer held, counts as
  // abandoned a lease after its last heartbeat and is dispatched again, as after a crash.
  if (!result.ok && rt.shutdown().aborted) return;
  if (stop.signal.aborted && !rt.shutdown().aborted) {
    // Cancelled or past the deadline: the run ends without this result. Make sure its
    // orchestrator runs now (a cancel dispatched it already; a deadline has only its timer).
    await rt.dispatchRun({ id: job.runId, workflow: job.workflow, ...(job.priority === undefined ? {} : { priority: job.priority }) });
    return;
  }
  rt.faults.hit({ point: 'after-step-body', runId: job.runId, stepKey: job.key });
  const running = { status: ['running' as const], attempt: step.attempt };
  // The same decision as an inline step's (`decideRetry`): attempts left, not non-retryable,
  // accepted by `retryIf`, after `retryAfter` or the backoff.
  let decision: RetryDecision = result.ok ? { retry: false } : decideRetry(probe.policy, result.error, step.attempt, step.maxAttempts);
  let failure = result.ok ? undefined : toErrorRecord(decision.retry ? result.error : (decision.error ?? result.error));
  let output: Json | undefined;
  if (result.ok && result.value !== undefined) {
    try {
      output = stepOutputJson(result.value, job.key, rt.maxPayloadBytes);
    } catch (error) {
      // Retrying cannot make a value serialisable: fail without further attempts.
      failure = toErrorRecord(error);
      decision = { retry: false };
    }
  }
  let transition: StepTransition;
  if (failure === undefined) {
    transition = {
      key: job.key,
      from: running,
      to: output === undefined ? { status: 'succeeded', wakeAt: null } : { status: 'succeeded', output, wakeAt: null },
      endAttempt: { status: 'succeeded' },
    };
  } else if (decision.retry) {
    transition = {
      key: job.key,
      from: running,
      to: { status: 'retry_wait', wakeAt: clock.now() + decision.delayMs },
      endAttempt: { status: 'failed', error: failure },
    };
  } else {
    transition = { key: job.key, from: running, to: { status: 'failed', error: failure, wakeAt: null }, endAttempt: { status: 'failed', error: failure } };
  }
  if (!(await finish(rt, job, transition)) || !lifecycle.steps) return;
  const base = lifecycle.stepBase(traced, job.key, step.attempt, true);
  const durationMs = base.at - startedAt;
  if (failure === undefined) lifecycle.step({ ...base, type: 'step.succeeded', durationMs }, output === undefined ? undefined : { output });
  else if (decision.retry)
    lifecycle.step({
      ...base,
      type: 'step.retry-scheduled',
      durationMs,
      error: lifecycleError(failure),
      delayMs: decision.delayMs,
      wakeAt: transition.to.wakeAt as number,
    });
  else lifecycle.step({ ...base, type: 'step.failed', durationMs, error: lifecycleError(failure) });
}

/** Records the attempt's result, then wakes and dispatches the run's orchestrator. False: the result was dropped. */
async function finish(rt: EngineRuntime, job: StepJob, transition: StepTransition): Promise<boolean> {
  const { store, clock } = rt;
  rt.faults.hit({ point: 'before-checkpoint', runId: job.runId, stepKey: job.key });
  try {
    await store.steps.transition(job.runId, null, transition, clock.now());
  } catch (error) {
    // The orchestrator declared this attempt abandoned (or the run ended): the late result is dropped.
    if (CairnError.is(error, 'STEP_CONFLICT') || CairnError.is(error, 'RUN_CONFLICT')) return false;
    throw error;
  }
  rt.faults.hit({ point: 'after-checkpoint', runId: job.runId, stepKey: job.key });
  await store.runs.wake(job.runId, clock.now());
  await rt.dispatchRun({ id: job.runId, workflow: job.workflow, ...(job.priority === undefined ? {} : { priority: job.priority }) });
  return true;
}

/**
 * When a running queued attempt counts as abandoned if its worker says nothing more: a lease from
 * now, but never past the attempt's deadline (its `timeout`, or `queuedStepTimeoutMs`).
 */
function heldUntil(rt: EngineRuntime, deadlineAt: number): number {
  return Math.min(deadlineAt, rt.clock.now() + rt.timings.leaseMs);
}

/**
 * The heartbeat of a queued attempt: while its body runs, every third of the lease, the attempt's
 * `wakeAt` (the time the orchestrator, replaying, counts it abandoned and dispatches the next
 * attempt) is moved to a lease from now, up to the attempt's deadline. A worker that dies stops
 * moving it, so its run moves again within `leaseMs` (plus a recovery pass) instead of at the
 * deadline (5 min by default); the orchestrator, woken by the dispatch timeout, replays about once
 * a lease while a long body runs. A body that ends within a third of the lease costs no heartbeat.
 * A write refused because the attempt moved on (abandoned, the run ended or was deleted) ends the
 * heartbeat; the result will be refused the same way. A store error is retried at the next beat:
 * the `wakeAt` written last still holds.
 */
function holdAttempt(rt: EngineRuntime, job: StepJob, attempt: number, heldAt: number, deadlineAt: number): AbortController {
  const controller = new AbortController();
  const every = cancelCheckMs(rt.timings);
  void (async () => {
    // Held up to its deadline already (a `timeout` shorter than the lease): nothing to move.
    for (let held = heldAt; held < deadlineAt; ) {
      try {
        await rt.clock.sleep(every, controller.signal);
      } catch {
        return;
      }
      const wakeAt = heldUntil(rt, deadlineAt);
      try {
        await rt.store.steps.transition(
          job.runId,
          null,
          { key: job.key, from: { status: ['running'], attempt }, to: { status: 'running', wakeAt } },
          rt.clock.now(),
        );
        held = wakeAt;
      } catch (error) {
        if (!CairnError.is(error, 'STORE_ERROR')) return;
      }
    }
  })();
  return controller;
}
