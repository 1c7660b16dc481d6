// The saga a failed or cancelled run runs before it ends: its succeeded steps' compensations in
// reverse call order, each recorded once (decision 24), run as task steps. Separate because it runs
// after the workflow code is done, over the store's view of the steps rather than the replay's.
import { CairnError } from '../../errors/cairn-error.js';
import { fromErrorRecord } from '../../errors/error-record-codec.js';
import type { ErrorRecord } from '../../model/error-record.js';
import type { NewStep, StepRecord, StepTransition } from '../../model/step.js';
import { SUSPEND } from './call.js';
import { type Compensation, type CompensationFailure, compensationKey, withCompensationFailures } from './compensation.js';
import { type Site, StepFailure } from './outcome.js';
import type { Replay } from './replay.js';
import type { TaskSteps } from './task-steps.js';

/** The saga: compensations of a failed or cancelled run, and making pending steps final first. */
export class Saga {
  constructor(
    private readonly r: Replay,
    private readonly tasks: TaskSteps,
  ) {}

  /** Runs the saga for a failed run, then ends it failed with the error (naming failed compensations). */
  async failAfterSaga(error: ErrorRecord, compensations: ReadonlyMap<string, Compensation>): Promise<void> {
    const runError = await this.saga(error, compensations);
    if (runError !== undefined) this.r.settle({ kind: 'failed', error: runError });
  }

  /**
   * The saga: undoes the run's succeeded steps by running their compensations in reverse call
   * order (`seq`), each recorded once as `<key>:compensate` (a recorded one is not run again; one
   * left `running` by a crash is abandoned and run again, so each runs at least once). A failing
   * compensation is recorded `failed` and does not stop the others. Before a step is looked at,
   * it is made final: inline steps of this execution record nothing more (`sealed`), and a step
   * still pending (a concurrent branch, a queued attempt on another worker) is failed with the run
   * error, by compare-and-set, so it can never succeed after its compensation was skipped.
   * Resolves the run error with `data.compensationFailures`, or `undefined` when the execution
   * ended otherwise meanwhile (crash, lost lease, a compensation waiting for its retry: suspended).
   */
  async saga(runError: ErrorRecord, compensations: ReadonlyMap<string, Compensation>): Promise<ErrorRecord | undefined> {
    this.tasks.sealed = true;
    if (compensations.size === 0 || this.r.closed) return this.r.closed ? undefined : runError;
    const error = fromErrorRecord(runError);
    // Bodies of the workflow's own steps still running are of no use now: abort them.
    if (!this.r.abort.signal.aborted) this.r.abort.abort(error);
    for (;;) {
      const failures: CompensationFailure[] = [];
      try {
        await this.sagaPass(runError, error, compensations, failures);
        return this.r.closed ? undefined : withCompensationFailures(runError, failures);
      } catch (failure) {
        if (this.r.closed) return undefined;
        if (failure !== SUSPEND) {
          this.r.settle({ kind: 'crashed', error: failure });
          return undefined;
        }
        const wakeAt = this.r.wakeTimes.length === 0 ? undefined : Math.min(...this.r.wakeTimes);
        const now = this.r.rt.clock.now();
        if (wakeAt === undefined || this.r.run.deadline === undefined || this.r.run.deadline > now) {
          // A compensation waits for a retry due later: the run sleeps until then, and the next
          // execution (replaying to the same failure, or cancelled again) resumes the saga.
          this.r.settle({ kind: 'suspended', wakeAt, reasons: [...this.r.suspendReasons] });
          return undefined;
        }
        // Past its deadline a run is woken at once (its wake time never passes the deadline), so
        // suspending would spin through executions: wait for the retry here, holding the lease.
        this.r.waiting = false;
        this.r.wakeTimes.length = 0;
        this.r.suspendReasons.clear();
        try {
          await this.r.rt.clock.sleep(Math.max(0, wakeAt - now), this.r.sagaSignal);
        } catch {
          return undefined;
        }
      }
    }
  }

  /** One pass over the compensations, reading the steps afresh; throws SUSPEND when one must wait. */
  async sagaPass(runError: ErrorRecord, error: Error, compensations: ReadonlyMap<string, Compensation>, failures: CompensationFailure[]): Promise<void> {
    const steps = new Map((await this.r.rt.store.steps.load(this.r.run.id)).map((step) => [step.key, step]));
    for (const entry of [...compensations.values()].sort((a, b) => b.site.seq - a.site.seq)) {
      const step = await this.settleForSaga(
        steps.get(entry.site.key) ?? (await this.recordUnrecorded(entry.site, entry.policy.maxAttempts, runError)),
        runError,
      );
      if (step?.status !== 'succeeded') continue;
      const key = compensationKey(entry.site.key);
      const recorded = steps.get(key);
      if (recorded?.status === 'succeeded') continue;
      if (recorded?.status === 'failed') {
        failures.push({ key, error: recorded.error ?? { name: 'Error', message: 'compensation failed' } });
        continue;
      }
      const site: Site = { kind: 'task', name: compensationKey(entry.site.name), key, seq: entry.site.seq, recorded };
      let ok = true;
      try {
        await this.tasks.inlineTask(site, () => entry.compensate(error), entry.policy, entry.timeoutMs, undefined, this.r.sagaSignal);
      } catch (failure) {
        if (!(failure instanceof StepFailure)) throw failure;
        failures.push({ key, error: failure.record });
        ok = false;
      }
      if (this.r.rt.lifecycle.steps)
        this.r.rt.lifecycle.step({ ...this.r.rt.lifecycle.stepBase(this.r.run, entry.site.key, step.attempt, step.queued), type: 'step.compensated', ok });
    }
  }

  /**
   * A step of this execution whose first attempt is still running unrecorded, as the saga finds it:
   * recorded failed with the run error, its attempt `abandoned` (what a start recorded before the
   * body would have shown). `undefined` when there is no such step.
   */
  async recordUnrecorded(site: Site, maxAttempts: number, runError: ErrorRecord): Promise<StepRecord | undefined> {
    const startedAt = this.tasks.unrecorded.get(site.key);
    if (startedAt === undefined) return undefined;
    const step: Omit<NewStep, 'key' | 'name' | 'kind' | 'seq'> = {
      status: 'failed',
      maxAttempts,
      error: runError,
      finishedAttempt: { status: 'abandoned', error: runError, worker: this.r.rt.workerId, startedAt },
    };
    // If its start write got there first, that record is returned and made final by the caller.
    return this.r.insert(site, step);
  }

  /**
   * A step as the saga finds it, made final: a task step still pending (scheduled, running,
   * waiting for a retry) is failed with the run error by compare-and-set; losing the race to its
   * own result means it just became final, so it is read again.
   */
  async settleForSaga(step: StepRecord | undefined, runError: ErrorRecord): Promise<StepRecord | undefined> {
    for (let tries = 0; step !== undefined && step.status !== 'succeeded' && step.status !== 'failed'; tries += 1) {
      const from = { status: [step.status], attempt: step.attempt };
      const transition: StepTransition =
        step.status === 'running'
          ? { key: step.key, from, to: { status: 'failed', error: runError, wakeAt: null }, endAttempt: { status: 'abandoned', error: runError } }
          : { key: step.key, from, to: { status: 'failed', error: runError, wakeAt: null } };
      try {
        return await this.r.transition(transition);
      } catch (error) {
        if (!CairnError.is(error, 'STEP_CONFLICT') || tries >= 5) throw error;
        step = (await this.r.rt.store.steps.load(this.r.run.id)).find((s) => s.key === step?.key);
      }
    }
    return step;
  }
}
