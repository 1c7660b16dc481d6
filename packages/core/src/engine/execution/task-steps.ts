// `ctx.step`: a task step inline (its body run here, attempts, retries in place or suspended,
// the one write that records it finished, the deferred start, careful mode) or queued (the job
// sent to a step worker and watched), and step rate limits. A part of an execution, working through
// its Replay (decision 55); the busiest primitive, with the most rules of its own (decisions 5, 33, 37).
import { CairnError } from '../../errors/cairn-error.js';
import { fromErrorRecord, toErrorRecord } from '../../errors/error-record-codec.js';
import type { ErrorRecord } from '../../model/error-record.js';
import type { Json } from '../../model/json.js';
import type { FinishedAttempt, NewStep, StepRecord, StepTransition } from '../../model/step.js';
import { lifecycleError } from '../../observe/lifecycle.js';
import { armTimer } from './arm-timer.js';
import { IDENTIFIER_LIMITS, checkIdentifier } from '../check-input.js';
import { toMilliseconds } from '../define/duration.js';
import type { StepJob } from './step-job.js';
import { checkStepRateLimit } from '../flow/flow-options.js';
import { type RetryDecision, type RetryPolicy, decideRetry, resolveStepRetry } from '../define/retry-policy.js';
import { type BodyResult, runStepBody } from './run-step-body.js';
import { stepOutputJson } from './step-output.js';
import { type StepRate, takeStepSlot } from '../flow/step-rate-gate.js';
import type { StepContext, StepOptions } from '../define/workflow-context.js';
import { type Call, type Delivery, SUSPEND } from './call.js';
import type { Compensation } from './compensation.js';
import { ABANDON_GRACE, type Site, StepFailure } from './outcome.js';
import type { Replay } from './replay.js';

/** What an attempt's outcome makes of its step (a transition's `to`). */
type StepOutcome = StepTransition['to'];

/** The start write of one inline attempt whose body runs before it is recorded (see `deferStart`). */
class DeferredStart {
  disarmed = false;
  /** The start write, once the timer fired. */
  started: Promise<StepRecord> | undefined = undefined;
  /** Cancels the timer. */
  cancel: () => void = ignoreRejection;

  constructor(
    readonly key: string,
    readonly startedAt: number,
  ) {}

  /** Disarms the timer (a later firing does nothing). */
  stop(): void {
    this.disarmed = true;
    this.cancel();
  }
}

function ignoreRejection(): void {}

/** Task steps (`ctx.step`): inline and queued, their attempts, retries and rate limits. */
export class TaskSteps {
  constructor(private readonly r: Replay) {}

  /** The rate limits of this execution's task steps, by step key. */
  readonly stepRates = new Map<string, StepRate>();
  /** `compensate` closures of the task steps called in this execution, by step key (see `saga`). */
  readonly compensations = new Map<string, Compensation>();
  /** Inline steps whose first attempt runs before anything is recorded: key → when it started. */
  readonly unrecorded = new Map<string, number>();
  /** The saga began: inline steps of this execution record no further outcome. */
  sealed = false;

  async taskStep(call: Call, name: string, fn: (s: StepContext) => unknown, options: StepOptions): Promise<Delivery> {
    checkIdentifier('ctx.step name', name, IDENTIFIER_LIMITS.stepName);
    if (typeof fn !== 'function') throw new CairnError('INVALID_INPUT', `ctx.step(${JSON.stringify(name)}): the body must be a function`);
    const policy = resolveStepRetry(options, this.r.rt.defaultRetry);
    const timeoutMs = options.timeout === undefined ? undefined : toMilliseconds(options.timeout, `timeout of step ${JSON.stringify(name)}`);
    // `null` means "not set", as for every other step option (and as `compensate` always did).
    const compensate = options.compensate ?? undefined;
    const rate = this.stepRate(name, options);
    if (compensate !== undefined && typeof compensate !== 'function')
      throw new CairnError('INVALID_INPUT', `ctx.step(${JSON.stringify(name)}): compensate must be a function`);
    const site = this.r.begin('task', name);
    // Known from the call on, whatever the step's state: the saga decides from the store which ones run.
    if (compensate !== undefined) this.compensations.set(site.key, { site, compensate, policy, timeoutMs });
    if (this.r.probeKey !== undefined) {
      if (site.key !== this.r.probeKey) return this.r.replayOnly(call, site);
      this.r.settle({ kind: 'probe-hit', fn, policy, timeoutMs, ...(rate === undefined ? {} : { rate }) });
      throw SUSPEND;
    }
    const recorded = site.recorded;
    if (recorded?.status === 'failed') {
      return this.r.finished(call, site, recorded, async () => ({ ok: false, error: this.failStep(site, recorded.error) }));
    }
    if (recorded?.status === 'succeeded') return this.r.finished(call, site, recorded, async () => ({ ok: true, value: recorded.output }));
    const queued = recorded ? recorded.queued : options.queued === true;
    if (rate !== undefined) this.stepRates.set(site.key, rate);
    try {
      const value = queued ? await this.queuedTask(call, site, policy) : await this.inlineTask(site, fn, policy, timeoutMs, call);
      return { turn: this.r.claimNow(call) ?? (await this.r.claim(call)), ok: true, value };
    } catch (error) {
      if (error instanceof StepFailure) {
        const turn = this.r.claimNow(call) ?? (await this.r.claim(call));
        return { turn, ok: false, error: this.failStep(site, error.record) };
      }
      throw error;
    }
  }

  /**
   * A step failed for good: returns the STEP_FAILED error the code sees. The step is not
   * compensated: it did not complete (its compensation undoes a success, in the run's saga).
   */
  failStep(site: Site, record: ErrorRecord | undefined): CairnError {
    const error = fromErrorRecord(record ?? { name: 'Error', message: 'step failed' });
    return this.r.stepFailed(site, error);
  }

  /**
   * Runs the step body inline until it succeeds or fails for good. `call`: the workflow call whose
   * outcome this is (its terminal write reserves the delivery turn); absent for a compensation,
   * whose outcome the code never sees. `signal`: what aborts the body besides its timeout (a
   * compensation runs after cancellation, so it has its own).
   */
  async inlineTask(
    site: Site,
    fn: (s: StepContext) => unknown,
    policy: RetryPolicy,
    timeoutMs: number | undefined,
    call: Call | undefined,
    signal: AbortSignal = this.r.abort.signal,
  ): Promise<Json | undefined> {
    const worker = this.r.rt.workerId;
    let step = site.recorded;
    // Before anything is written: a refused take may suspend the run with the step as it was.
    if (this.stepRates.has(site.key)) await this.takeRateSlot(site, step, signal);
    if (!step) {
      if (this.recordsStartFirst()) {
        step = await this.r.insert(site, { status: 'running', maxAttempts: policy.maxAttempts, worker });
        if (step.status !== 'running' || step.attempt !== 1) return this.inlineTask({ ...site, recorded: step }, fn, policy, timeoutMs, call, signal);
      }
    } else if (step.status === 'running') {
      // We hold the lease, so whoever ran this attempt is gone: it was abandoned.
      if (step.attempt >= step.maxAttempts + ABANDON_GRACE) {
        const error = toErrorRecord(new CairnError('ATTEMPT_ABANDONED', `Step ${JSON.stringify(site.key)}: every attempt was abandoned by a crashing worker`));
        const to: StepOutcome = { status: 'failed', error };
        if (call !== undefined) to.turn = this.r.claimNow(call) ?? (await this.r.claim(call));
        await this.r.transition({ key: site.key, from: { status: ['running'], attempt: step.attempt }, to, endAttempt: { status: 'abandoned', error } });
        throw new StepFailure(error);
      }
      step = await this.r.transition({
        key: site.key,
        from: { status: ['running'], attempt: step.attempt },
        to: { status: 'running', attempt: step.attempt + 1 },
        endAttempt: { status: 'abandoned' },
        startAttempt: { worker },
      });
    } else if (step.status === 'retry_wait') {
      step = await this.awaitRetry(site, step, signal);
    }
    const lifecycle = this.r.rt.lifecycle;
    for (;;) {
      const attempt = step?.attempt ?? 1;
      const startedAt = this.r.rt.clock.now();
      if (lifecycle.steps) lifecycle.step({ ...lifecycle.stepBase(this.r.run, site.key, attempt, false), type: 'step.started' });
      // Not recorded yet: the body runs first and the step is recorded once, finished (one write);
      // a body still running after `recordStartAfterMs` has its start recorded meanwhile.
      const deferred = step === undefined ? this.deferStart(site, policy.maxAttempts, call) : undefined;
      // A pause lets this body finish and its outcome be recorded (`Replay.pauseIfIdle`).
      const bodyDone = this.r.bodyStarted();
      try {
        let result: BodyResult;
        try {
          result = await runStepBody(this.r.rt.clock, fn, { runId: this.r.run.id, key: site.key, attempt }, timeoutMs, signal);
          this.r.fault('after-step-body', site.key);
          // The run's saga has begun: a workflow step's late outcome is not recorded (the saga failed
          // the step, or is about to), so it can never succeed after its compensation was skipped.
          if (this.sealed && call !== undefined) throw SUSPEND;
          if (deferred !== undefined) {
            this.settleDeferred(deferred);
            // Awaited only when the start write fired: most bodies end before it does.
            if (deferred.started !== undefined) step = await this.startedStep(deferred);
          }
        } finally {
          deferred?.stop();
        }
        let output: Json | undefined;
        // One decision for inline and queued steps (`decideRetry`): attempts left, not
        // non-retryable, accepted by `retryIf`; the wait is `retryAfter` or the backoff.
        let decision: RetryDecision = result.ok ? { retry: false } : decideRetry(policy, result.error, attempt, step?.maxAttempts ?? policy.maxAttempts);
        let failure = result.ok ? undefined : toErrorRecord(decision.retry ? result.error : (decision.error ?? result.error));
        if (result.ok && result.value !== undefined) {
          try {
            output = stepOutputJson(result.value, site.key, this.r.rt.maxPayloadBytes);
          } catch (error) {
            // Retrying cannot make a value serialisable: fail without further attempts.
            failure = toErrorRecord(error);
            decision = { retry: false };
          }
        }
        if (failure === undefined) {
          this.r.fault('before-checkpoint', site.key);
          const to: StepOutcome = output === undefined ? { status: 'succeeded' } : { status: 'succeeded', output };
          if (call !== undefined) to.turn = this.r.claimNow(call) ?? (await this.r.claim(call));
          await this.recordAttempt(site, step, attempt, policy.maxAttempts, to, { status: 'succeeded' }, deferred);
          bodyDone();
          this.r.fault('after-checkpoint', site.key);
          if (lifecycle.steps) {
            const base = lifecycle.stepBase(this.r.run, site.key, attempt, false);
            lifecycle.step({ ...base, type: 'step.succeeded', durationMs: base.at - startedAt }, output === undefined ? undefined : { output });
          }
          return output;
        }
        if (this.r.cancelled && call !== undefined) throw this.r.cancelError;
        if (decision.retry) {
          const wakeAt = this.r.rt.clock.now() + decision.delayMs;
          this.r.fault('before-checkpoint', site.key);
          step = await this.recordAttempt(
            site,
            step,
            attempt,
            policy.maxAttempts,
            { status: 'retry_wait', wakeAt },
            { status: 'failed', error: failure },
            deferred,
          );
          bodyDone();
          this.r.fault('after-checkpoint', site.key);
          if (lifecycle.steps) {
            const base = lifecycle.stepBase(this.r.run, site.key, attempt, false);
            lifecycle.step({
              ...base,
              type: 'step.retry-scheduled',
              durationMs: base.at - startedAt,
              error: lifecycleError(failure),
              delayMs: decision.delayMs,
              wakeAt,
            });
          }
          await this.takeRateSlot(site, step, signal);
          step = await this.awaitRetry(site, step, signal);
          continue;
        }
        this.r.fault('before-checkpoint', site.key);
        const to: StepOutcome = { status: 'failed', error: failure };
        if (call !== undefined) to.turn = this.r.claimNow(call) ?? (await this.r.claim(call));
        await this.recordAttempt(site, step, attempt, policy.maxAttempts, to, { status: 'failed', error: failure }, deferred);
        bodyDone();
        this.r.fault('after-checkpoint', site.key);
        if (lifecycle.steps) {
          const base = lifecycle.stepBase(this.r.run, site.key, attempt, false);
          lifecycle.step({ ...base, type: 'step.failed', durationMs: base.at - startedAt, error: lifecycleError(failure) });
        }
        throw new StepFailure(failure);
      } finally {
        bodyDone();
      }
    }
  }

  /**
   * An attempt's outcome: the step's first record, finished (`step` not on record yet: one write),
   * or a transition of the recorded step's running attempt.
   */
  recordAttempt(
    site: Site,
    step: StepRecord | undefined,
    attempt: number,
    maxAttempts: number,
    to: StepOutcome,
    endAttempt: StepTransition['endAttempt'] & {},
    deferred: DeferredStart | undefined,
  ): Promise<StepRecord> {
    if (step !== undefined) return this.r.transition({ key: site.key, from: { status: ['running'], attempt }, to, endAttempt });
    return this.insertFinished(site, maxAttempts, to, { ...endAttempt, worker: this.r.rt.workerId, startedAt: deferred?.startedAt ?? this.r.rt.clock.now() });
  }

  /**
   * Whether a new inline step records its start before its body runs (two writes) instead of once,
   * finished: when the store cannot record a finished step in one write, when configured so
   * (`recordStartAfterMs: 0`), and in careful mode — an earlier claim of this run ended without
   * recording anything, as a body that kills its process does. Then every attempt is on record
   * before its body runs, so a crash-looping step is counted and ends failed after its attempts.
   * Also when the lease may be gone (not renewed in time, e.g. a paused process): the fenced start
   * write then refuses before the body runs, as it always did.
   */
  recordsStartFirst(): boolean {
    return (
      this.r.rt.store.capabilities.insertFinished !== true ||
      this.r.rt.timings.recordStartAfterMs === 0 ||
      this.r.claimsWithoutProgress() > 1 ||
      this.r.rt.clock.now() >= this.r.leaseHeldUntil
    );
  }

  /**
   * Arms the start write of a step whose body runs before it is recorded: fired when the body is
   * still running after `recordStartAfterMs`. `settleDeferred` (the body finished) disarms it, and
   * `startedStep` gives the step it recorded, if it fired; `stop` disarms it. Until settled the
   * step is listed in `unrecorded`, so a saga that begins meanwhile records it failed with an
   * abandoned attempt.
   */
  deferStart(site: Site, maxAttempts: number, call: Call | undefined): DeferredStart {
    const deferred = new DeferredStart(site.key, this.r.rt.clock.now());
    this.unrecorded.set(site.key, deferred.startedAt);
    deferred.cancel = armTimer(this.r.rt.clock, this.r.rt.timings.recordStartAfterMs, () => {
      // A workflow step's body no longer counts once the saga began (see `inlineTask`).
      if (deferred.disarmed || this.r.closed || (this.sealed && call !== undefined)) return;
      deferred.started = this.r.insert(site, { status: 'running', maxAttempts, worker: this.r.rt.workerId });
      deferred.started.catch(ignoreRejection);
    });
    return deferred;
  }

  /** The body finished: the start write is disarmed and the step no longer `unrecorded`. */
  settleDeferred(deferred: DeferredStart): void {
    deferred.stop();
    this.unrecorded.delete(deferred.key);
  }

  /** The step the fired start write recorded (see `deferStart`). */
  async startedStep(deferred: DeferredStart): Promise<StepRecord> {
    const step = await (deferred.started as Promise<StepRecord>);
    // Only this execution writes this key while it holds the lease: anything else is a defect.
    if (step.status !== 'running' || step.attempt !== 1)
      throw new CairnError(
        'STEP_CONFLICT',
        `Step ${JSON.stringify(deferred.key)} was recorded ${step.status} (attempt ${step.attempt}) while its first attempt ran`,
      );
    return step;
  }

  /** Records a step that is not on record yet with its finished first attempt: ONE write. */
  async insertFinished(site: Site, maxAttempts: number, to: StepOutcome, finishedAttempt: FinishedAttempt): Promise<StepRecord> {
    const step: Omit<NewStep, 'key' | 'name' | 'kind' | 'seq'> = { status: to.status, maxAttempts, finishedAttempt };
    if (to.output !== undefined) step.output = to.output;
    if (to.error !== undefined) step.error = to.error;
    if (typeof to.wakeAt === 'number') step.wakeAt = to.wakeAt;
    if (to.turn !== undefined) step.turn = to.turn;
    const written = await this.r.insert(site, step);
    // Only this execution writes this key while it holds the lease: anything else is a defect.
    if (written.status !== to.status || written.attempt !== 1)
      throw new CairnError('STEP_CONFLICT', `Step ${JSON.stringify(site.key)} was already recorded ${written.status} (attempt ${written.attempt})`);
    return written;
  }

  /**
   * `ctx.step`'s `rateLimit`, checked: `undefined` when absent; `INVALID_INPUT` when malformed or
   * on a store without slots. A queued step's slot is taken by the step worker (`executeStepJob`).
   */
  stepRate(name: string, options: StepOptions): StepRate | undefined {
    if (options.rateLimit === undefined) return undefined;
    const what = `ctx.step(${JSON.stringify(name)}) rateLimit`;
    const rate = checkStepRateLimit(what, options.rateLimit);
    if (this.r.rt.store.slots === undefined) throw new CairnError('INVALID_INPUT', `${what}: store ${this.r.rt.store.name} has no slots to enforce it with`);
    return rate;
  }

  /**
   * Takes a slot of the step's rate limit before an attempt (none for a step without one, or one
   * whose retry waits long enough to suspend anyway: it takes its slot when it resumes). A refusal
   * that frees late suspends the run until then (SUSPEND), the step unchanged.
   */
  async takeRateSlot(site: Site, step: StepRecord | undefined, signal: AbortSignal): Promise<void> {
    const rate = this.stepRates.get(site.key);
    if (rate === undefined) return;
    if (step?.status === 'retry_wait' && (step.wakeAt ?? 0) - this.r.rt.clock.now() > this.r.rt.timings.inlineRetryMaxMs) return;
    const { wakeAt } = await takeStepSlot(this.r.rt, this.r.run.id, rate, signal);
    if (wakeAt !== undefined) this.r.suspend(wakeAt, 'rate-limit');
  }

  /** Waits out a retry delay in place when short, else suspends; then opens the next attempt. */
  async awaitRetry(site: Site, step: StepRecord, signal: AbortSignal): Promise<StepRecord> {
    const wait = (step.wakeAt ?? 0) - this.r.rt.clock.now();
    if (wait > this.r.rt.timings.inlineRetryMaxMs) this.r.suspend(step.wakeAt, 'retry');
    if (wait > 0) await this.r.rt.clock.sleep(wait, signal);
    return this.r.transition({
      key: site.key,
      from: { status: ['retry_wait'], attempt: step.attempt },
      to: { status: 'running', attempt: step.attempt + 1, wakeAt: null },
      startAttempt: { worker: this.r.rt.workerId },
    });
  }

  /** A step whose body runs on the step queue: record the dispatch, send it, watch it. */
  async queuedTask(call: Call, site: Site, policy: RetryPolicy): Promise<Json | undefined> {
    const { dispatchTimeoutMs } = this.r.rt.timings;
    const now = this.r.rt.clock.now();
    let step = site.recorded;
    if (!step) {
      step = await this.r.insert(site, { status: 'scheduled', queued: true, maxAttempts: policy.maxAttempts, wakeAt: now + dispatchTimeoutMs });
      await this.r.rt.dispatchStep(this.stepJob(site.key, step.attempt));
      this.r.suspend(step.wakeAt, 'queued-step');
    }
    const due = step.wakeAt === undefined || step.wakeAt <= now;
    if (!due) this.r.suspend(step.wakeAt, 'queued-step');
    const from = { status: [step.status], attempt: step.attempt };
    let next: StepTransition;
    if (step.status === 'scheduled') {
      next = { key: site.key, from, to: { status: 'scheduled', wakeAt: now + dispatchTimeoutMs } };
    } else if (step.status === 'running') {
      if (step.attempt >= step.maxAttempts + ABANDON_GRACE) {
        const error = toErrorRecord(new CairnError('ATTEMPT_ABANDONED', `Step ${JSON.stringify(site.key)}: every attempt was abandoned by a crashing worker`));
        await this.queuedWrite({
          key: site.key,
          from,
          to: { status: 'failed', error, turn: await this.r.claim(call) },
          endAttempt: { status: 'abandoned', error },
        });
        throw new StepFailure(error);
      }
      next = {
        key: site.key,
        from,
        to: { status: 'scheduled', attempt: step.attempt + 1, wakeAt: now + dispatchTimeoutMs },
        endAttempt: { status: 'abandoned' },
      };
    } else {
      next = { key: site.key, from, to: { status: 'scheduled', attempt: step.attempt + 1, wakeAt: now + dispatchTimeoutMs } };
    }
    const written = await this.queuedWrite(next);
    await this.r.rt.dispatchStep(this.stepJob(site.key, written.attempt));
    this.r.suspend(written.wakeAt, 'queued-step');
  }

  /** The job of a queued step's attempt: it carries this execution's trace context and the run's priority. */
  stepJob(key: string, attempt: number): StepJob {
    return {
      runId: this.r.run.id,
      workflow: this.r.run.workflow,
      key,
      attempt,
      ...(this.r.traceContext === undefined ? {} : { traceContext: this.r.traceContext }),
      ...(this.r.run.priority === undefined ? {} : { priority: this.r.run.priority }),
    };
  }

  /** A write racing the step worker: losing the race only means the step moved on; look again soon. */
  async queuedWrite(transition: StepTransition): Promise<StepRecord> {
    try {
      return await this.r.transition(transition);
    } catch (error) {
      if (CairnError.is(error, 'STEP_CONFLICT')) this.r.suspend(this.r.rt.clock.now(), 'recheck');
      throw error;
    }
  }
}
