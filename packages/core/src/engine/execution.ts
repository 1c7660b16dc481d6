import { CairnError } from '../errors/cairn-error.js';
import { fromErrorRecord, toErrorRecord } from '../errors/error-record-codec.js';
import type { ErrorRecord } from '../model/error-record.js';
import type { Json } from '../model/json.js';
import type { RunRecord } from '../model/run.js';
import type { NewStep, StepKind, StepRecord, StepTransition } from '../model/step.js';
import { toJsonRoundTrip } from '../serialization/json-value.js';
import type { WorkflowDefinition } from './define-workflow.js';
import { checkWakeTime, toMilliseconds } from './duration.js';
import type { EngineRuntime } from './engine-runtime.js';
import type { FaultPoint } from './fault-point.js';
import { decideRetry, type RetryDecision, type RetryPolicy, resolveStepRetry } from './retry-policy.js';
import { runStepBody } from './run-step-body.js';
import { uuidv4, uuidv7 } from './uuid.js';
import { ABANDON_GRACE, cancelledError, INFRA_CODES, type Outcome, type Site, StepFailure } from './execution-outcome.js';
import { checkIdentifier, checkOptions, IDENTIFIER_LIMITS } from './check-input.js';
import { TurnScheduler } from './turn-scheduler.js';
import { checkEventName, eventNameOf } from './event-definition.js';
import { CONTINUED_AS, continuedAs } from './continued-as.js';
import { checkAlternatives, type CheckedAlternative } from './select-alternatives.js';
import { childStart } from './run-deadline.js';
import { type Compensation, type CompensationFailure, compensationKey, SAGA_PROBE_KEY, withCompensationFailures } from './compensation.js';

export type { Outcome } from './execution-outcome.js';
import type { ChildOptions, StartChildOptions, StepContext, StepOptions, WaitForEventOptions, WorkflowContext } from './workflow-context.js';
import { childOutcomeOf } from './child-outcome.js';

// Returned by primitives that cannot continue in this execution; never settles, so the handler
// simply stops there (the next execution replays past it).
const NEVER: Promise<never> = new Promise(() => {});
// Thrown inside a primitive to unwind it when it must wait; turned into NEVER by `guard`.
const SUSPEND = Symbol('suspend');

/** One primitive call: its number in call order, and the delivery turn it reserved, if any. */
interface Call {
  no: number;
  turn: number | undefined;
}

/**
 * A primitive's outcome and the turn in which workflow code may see it. `key`: the recorded step it
 * replays (its turn waits for it).
 */
type Delivery = { turn: number; key?: string; onDeliver?: () => void } & ({ ok: true; value: unknown } | { ok: false; error: unknown });
/**
 * One replay of a run: runs the handler from the top, serving recorded steps from the snapshot read
 * at the start, executing the first unrecorded ones, and ending as completed, failed, cancelled or
 * suspended (every branch waiting). In probe mode it only replays until it finds the body of the
 * step `probeKey` (for queued step workers) and never writes.
 */
export class Execution {
  private readonly recorded = new Map<string, StepRecord>();
  private readonly recordedBySeq = new Map<number, StepRecord>();
  private readonly occurrences = new Map<string, number>();
  private readonly abort = new AbortController();
  private readonly stateOverlay = new Map<string, Json>();
  private readonly children = new Set<string>();
  /** Keys called in this execution (a recorded turn must not wait for a key never called). */
  private readonly calledKeys = new Set<string>();
  /** Per event name, the next message a wait or a select takes (see `reserveMessage`). */
  private readonly messageCursor = new Map<string, number>();
  /** The highest position the history recorded a call at (-1: none). */
  private readonly maxRecordedSeq: number;
  /** New outcomes waiting for the replay to catch up with the history (see `claim`). */
  private readonly catchUpWaiters: (() => void)[] = [];
  private stateSnapshot: Record<string, Json> | undefined;
  private callIndex = 0;
  private callNo = 0;
  private inflight = 0;
  private readonly turns: TurnScheduler;
  private readonly wakeTimes: number[] = [];
  private waiting = false;
  private finishing = false;
  private closed = false;
  private cancelled: boolean;
  /** What ends the run once `cancelled`: CANCELLED (with the cancel's reason) or DEADLINE_EXCEEDED. */
  private cancelError: CairnError;
  private fatal: CairnError | undefined;
  /** `compensate` closures of the task steps called in this execution, by step key (see `saga`). */
  private readonly compensations = new Map<string, Compensation>();
  /** The saga began: inline steps of this execution record no further outcome. */
  private sealed = false;
  /** Aborts compensation bodies when the execution ends (`abort` fires at cancellation already). */
  private readonly sagaAbort = new AbortController();
  private settleOutcome: ((outcome: Outcome) => void) | undefined;

  constructor(
    private readonly rt: EngineRuntime,
    private readonly run: RunRecord,
    steps: readonly StepRecord[],
    private readonly def: WorkflowDefinition<any, any>,
    private readonly probeKey?: string,
  ) {
    for (const step of steps) {
      this.recorded.set(step.key, step);
      // Compensation steps share their step's seq; the position check only covers primary calls.
      if (!step.key.endsWith(':compensate')) this.recordedBySeq.set(step.seq, step);
    }
    this.cancelled = run.cancelRequested && probeKey === undefined;
    this.cancelError = cancelledError(run.id, run.cancelReason);
    this.turns = new TurnScheduler(steps, () => this.quiet(), rt.turnsInProgress, () => this.releaseCaughtUp());
    this.maxRecordedSeq = Math.max(-1, ...this.recordedBySeq.keys());
  }

  /** Runs the handler and resolves with how this execution ended. */
  start(): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      this.settleOutcome = resolve;
      if (this.cancelled) {
        this.finishing = true;
        void this.finishCancelled();
        return;
      }
      const ctx = this.context();
      Promise.resolve()
        .then(() => this.def.handler(ctx, this.run.input))
        .then(
          (output) => this.finish({ ok: true, output }),
          (error) => this.finish({ ok: false, error }),
        );
      this.turns.begin();
    });
  }

  /**
   * Cancellation was requested (or the deadline passed) while this execution runs: `error` (default
   * CANCELLED with the reason the run was claimed with) becomes `signal.reason` of `ctx.signal` and
   * of every running inline body, and every later primitive throws it. The first call wins. A
   * DEADLINE_EXCEEDED error ends the run `failed` with it; anything else ends it `cancelled`.
   */
  observeCancel(error?: CairnError): void {
    if (this.cancelled || this.probeKey !== undefined) return;
    this.cancelled = true;
    if (error) this.cancelError = error;
    this.abort.abort(this.cancelError);
  }

  /** Abandons the execution with no further write (lease lost, store down, simulated crash). */
  crash(error: unknown): void {
    this.settle({ kind: 'crashed', error });
  }

  private settle(outcome: Outcome): void {
    if (this.closed) return;
    this.closed = true;
    this.turns.stop();
    if (!this.abort.signal.aborted) this.abort.abort(new CairnError('ENGINE_STOPPED', 'execution ended'));
    if (!this.sagaAbort.signal.aborted) this.sagaAbort.abort(new CairnError('ENGINE_STOPPED', 'execution ended'));
    this.settleOutcome?.(outcome);
  }

  private async finish(result: { ok: true; output: unknown } | { ok: false; error: unknown }): Promise<void> {
    if (this.closed) return;
    this.finishing = true;
    if (this.probeKey !== undefined) return this.settle({ kind: 'probe-miss' });
    if (this.fatal) return this.settle({ kind: 'failed', error: toErrorRecord(this.fatal) });
    if (this.cancelled) return this.finishCancelled();
    // A deterministic replay makes at least every call the history recorded (positions 0..n-1). A
    // handler that ends before reaching a recorded step runs changed code: its result is not one
    // this history can produce.
    const unreached = [...this.recordedBySeq.values()].find((step) => step.seq >= this.callIndex);
    if (unreached) {
      const error = new CairnError(
        'NON_DETERMINISM',
        `Run ${this.run.id}: the workflow ${result.ok ? 'returned' : 'threw'} after ${this.callIndex} calls, but the history has ${unreached.kind} ${JSON.stringify(unreached.key)} at #${unreached.seq}. The workflow code changed under a running run; register the new code as a new version.`,
        { data: { runId: this.run.id, seq: unreached.seq, expected: unreached.key, actual: null } },
      );
      return this.settle({ kind: 'failed', error: toErrorRecord(error) });
    }
    // A failed run is undone: every call was made in this execution, so every compensation
    // closure is known (a NON_DETERMINISM failure above is not: the code does not match its history).
    if (!result.ok) return this.failAfterSaga(toErrorRecord(result.error), this.compensations);
    if (result.output === undefined) return this.settle({ kind: 'completed', output: undefined });
    let value: Json;
    try {
      value = toJsonRoundTrip(result.output, { what: `output of workflow ${this.def.name}`, maxBytes: this.rt.maxPayloadBytes }).value;
    } catch (error) {
      return this.failAfterSaga(toErrorRecord(error), this.compensations);
    }
    this.settle({ kind: 'completed', output: value });
  }

  /** Runs the saga for a failed run, then ends it failed with the error (naming failed compensations). */
  private async failAfterSaga(error: ErrorRecord, compensations: ReadonlyMap<string, Compensation>): Promise<void> {
    const runError = await this.saga(error, compensations);
    if (runError !== undefined) this.settle({ kind: 'failed', error: runError });
  }

  private async finishCancelled(): Promise<void> {
    // Propagate to every child this run started that may still be running. Detached children
    // (ctx.startChild: recorded `succeeded` at once, never in `children`) are left running.
    for (const step of this.recorded.values()) {
      if (step.kind === 'child' && step.status === 'waiting' && step.childRunId) this.children.add(step.childRunId);
    }
    // Children are cancelled with the parent's reason; a parent past its deadline says so.
    const deadline = CairnError.is(this.cancelError, 'DEADLINE_EXCEEDED');
    const reason = deadline ? `parent run ${this.run.id} passed its deadline` : (this.cancelError.data as { reason?: string } | undefined)?.reason;
    try {
      for (const childId of this.children) {
        const child = await this.rt.store.runs.requestCancel(childId, this.rt.clock.now(), ...(reason === undefined ? [] : [reason]));
        // A child executing in this process learns of it now, as with `engine.cancel`, instead of
        // at its next lease renewal (by which time a short child has run to completion).
        if (child) this.rt.executing.get(child.id)?.observeCancel(cancelledError(child.id, child.cancelReason));
        if (child) await this.rt.dispatchRun(child.id, child.workflow);
      }
    } catch (error) {
      return this.settle({ kind: 'crashed', error });
    }
    // Compensation closures exist only for calls made in an execution, and this one may have made
    // none (cancelled before the replay) or only some (cancelled mid-replay): then a probe replays
    // the handler over the history, writing nothing, and collects every step's closure.
    let compensations: ReadonlyMap<string, Compensation> = this.compensations;
    const missed = [...this.recorded.values()].some((step) => step.kind === 'task' && !step.key.endsWith(':compensate') && !this.calledKeys.has(step.key));
    if (missed) {
      try {
        const steps = await this.rt.store.steps.load(this.run.id);
        if (this.closed) return;
        const probe = new Execution(this.rt, this.run, steps, this.def, SAGA_PROBE_KEY);
        await probe.start();
        compensations = probe.compensations;
      } catch (error) {
        return this.settle({ kind: 'crashed', error });
      }
    }
    const runError = await this.saga(toErrorRecord(this.cancelError), compensations);
    if (runError !== undefined) this.settle({ kind: deadline ? 'failed' : 'cancelled', error: runError });
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
  private async saga(runError: ErrorRecord, compensations: ReadonlyMap<string, Compensation>): Promise<ErrorRecord | undefined> {
    this.sealed = true;
    if (compensations.size === 0 || this.closed) return this.closed ? undefined : runError;
    const error = fromErrorRecord(runError);
    // Bodies of the workflow's own steps still running are of no use now: abort them.
    if (!this.abort.signal.aborted) this.abort.abort(error);
    for (;;) {
      const failures: CompensationFailure[] = [];
      try {
        await this.sagaPass(runError, error, compensations, failures);
        return this.closed ? undefined : withCompensationFailures(runError, failures);
      } catch (failure) {
        if (this.closed) return undefined;
        if (failure !== SUSPEND) {
          this.settle({ kind: 'crashed', error: failure });
          return undefined;
        }
        const wakeAt = this.wakeTimes.length === 0 ? undefined : Math.min(...this.wakeTimes);
        const now = this.rt.clock.now();
        if (wakeAt === undefined || this.run.deadline === undefined || this.run.deadline > now) {
          // A compensation waits for a retry due later: the run sleeps until then, and the next
          // execution (replaying to the same failure, or cancelled again) resumes the saga.
          this.settle({ kind: 'suspended', wakeAt });
          return undefined;
        }
        // Past its deadline a run is woken at once (its wake time never passes the deadline), so
        // suspending would spin through executions: wait for the retry here, holding the lease.
        this.waiting = false;
        this.wakeTimes.length = 0;
        try {
          await this.rt.clock.sleep(Math.max(0, wakeAt - now), this.sagaAbort.signal);
        } catch {
          return undefined;
        }
      }
    }
  }

  /** One pass over the compensations, reading the steps afresh; throws SUSPEND when one must wait. */
  private async sagaPass(runError: ErrorRecord, error: Error, compensations: ReadonlyMap<string, Compensation>, failures: CompensationFailure[]): Promise<void> {
    const steps = new Map((await this.rt.store.steps.load(this.run.id)).map((step) => [step.key, step]));
    for (const entry of [...compensations.values()].sort((a, b) => b.site.seq - a.site.seq)) {
      const step = await this.settleForSaga(steps.get(entry.site.key), runError);
      if (step?.status !== 'succeeded') continue;
      const key = compensationKey(entry.site.key);
      const recorded = steps.get(key);
      if (recorded?.status === 'succeeded') continue;
      if (recorded?.status === 'failed') {
        failures.push({ key, error: recorded.error ?? { name: 'Error', message: 'compensation failed' } });
        continue;
      }
      const site: Site = { kind: 'task', name: compensationKey(entry.site.name), key, seq: entry.site.seq, recorded };
      try {
        await this.inlineTask(site, () => entry.compensate(error), entry.policy, entry.timeoutMs, undefined, this.sagaAbort.signal);
      } catch (failure) {
        if (!(failure instanceof StepFailure)) throw failure;
        failures.push({ key, error: failure.record });
      }
    }
  }

  /**
   * A step as the saga finds it, made final: a task step still pending (scheduled, running,
   * waiting for a retry) is failed with the run error by compare-and-set; losing the race to its
   * own result means it just became final, so it is read again.
   */
  private async settleForSaga(step: StepRecord | undefined, runError: ErrorRecord): Promise<StepRecord | undefined> {
    for (let tries = 0; step !== undefined && step.status !== 'succeeded' && step.status !== 'failed'; tries += 1) {
      const from = { status: [step.status], attempt: step.attempt };
      const transition: StepTransition =
        step.status === 'running'
          ? { key: step.key, from, to: { status: 'failed', error: runError, wakeAt: null }, endAttempt: { status: 'abandoned', error: runError } }
          : { key: step.key, from, to: { status: 'failed', error: runError, wakeAt: null } };
      try {
        return await this.transition(transition);
      } catch (error) {
        if (!CairnError.is(error, 'STEP_CONFLICT') || tries >= 5) throw error;
        step = (await this.rt.store.steps.load(this.run.id)).find((s) => s.key === step?.key);
      }
    }
    return step;
  }

  // ---------------------------------------------------------------- the machinery of primitives

  private context(): WorkflowContext {
    return {
      runId: this.run.id,
      workflow: this.run.workflow,
      version: this.run.version,
      signal: this.abort.signal,
      step: (name, fn, options) => this.guard((call) => this.taskStep(call, name, fn, options ?? {})) as Promise<any>,
      sleep: (name, duration) =>
        this.guard((call) => {
          const ms = toMilliseconds(duration, `sleep ${JSON.stringify(name)}`);
          return this.sleepStep(call, name, this.rt.clock.now() + ms);
        }),
      sleepUntil: (name, until) =>
        this.guard((call) => this.sleepStep(call, name, checkWakeTime(until, this.rt.clock.now(), `sleepUntil ${JSON.stringify(name)}`))),
      waitForEvent: (event: unknown, options?: WaitForEventOptions) => this.guard((call) => this.eventStep(call, event, options ?? {})) as Promise<any>,
      child: (workflow, input, options) => this.guard((call) => this.childStep(call, workflow, input, options ?? {})) as Promise<any>,
      childOutcome: (workflow, input, options) =>
        this.guard(async (call) => {
          const checked = checkOptions('ctx.childOutcome options', options, ['name']) as ChildOptions;
          return this.asChildOutcome(await this.childStep(call, workflow, input, checked, 'ctx.childOutcome'));
        }) as Promise<any>,
      startChild: (workflow, input, options) =>
        this.guard((call) => this.startChildStep(call, workflow, input, checkOptions('ctx.startChild options', options, ['name']) as StartChildOptions)) as Promise<string>,
      setState: (key, value) => this.guard((call) => this.setState(call, key, value)),
      state: (key) => this.guard((call) => this.readState(call, key)) as Promise<any>,
      now: () => this.guard((call) => this.recordedValue(call, 'now', () => this.rt.clock.now())) as Promise<number>,
      random: () => this.guard((call) => this.recordedValue(call, 'random', () => Math.random())) as Promise<number>,
      uuid: () => this.guard((call) => this.recordedValue(call, 'uuid', () => uuidv4())) as Promise<string>,
      continueAsNew: (input) => this.guard((call) => this.continueAsNew(call, input)) as Promise<never>,
      select: (name, alternatives) => this.guard((call) => this.selectStep(call, name, alternatives)) as Promise<any>,
    };
  }

  /**
   * Wraps every primitive: refuses work once the execution ended, counts calls whose outcome the
   * code has not seen yet, and hands each outcome over in its turn (see TurnScheduler). Errors
   * raised before the primitive touched the store (bad arguments) reach the code at once.
   */
  private guard<T>(body: (call: Call) => Promise<Delivery>): Promise<T> {
    if (this.closed) return NEVER;
    if (this.fatal) return Promise.reject(this.fatal);
    if (this.cancelled) return Promise.reject(this.cancelError);
    if (this.turns.drained && this.inflight > 0) {
      // The code resumed outside any turn (it awaited a timer or I/O rather than a primitive)
      // while other branches wait for outcomes: where this call falls among theirs depends on
      // timing, so no replay could give every call its own record. Refuse before anything is written.
      this.fatal = new CairnError(
        'NON_DETERMINISM',
        `Run ${this.run.id}: a primitive was called after the workflow awaited something other than a Cairn primitive while other branches were in flight; its place among their calls cannot be replayed. Move that asynchronous work into a ctx.step.`,
        { data: { runId: this.run.id } },
      );
      return Promise.reject(this.fatal);
    }
    const call: Call = { no: this.callNo++, turn: undefined };
    this.inflight++;
    let promise: Promise<Delivery>;
    try {
      promise = body(call);
    } catch (error) {
      promise = Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      promise.then(
        (delivery) => {
          if (this.closed) return;
          if (delivery.turn <= this.turns.turn) {
            this.fatal = new CairnError(
              'NON_DETERMINISM',
              `Run ${this.run.id}: step ${JSON.stringify(delivery.key)} was delivered in turn ${delivery.turn} of the recorded execution, but this replay reached its call only in turn ${this.turns.turn}. The workflow code changed under a running run; register the new code as a new version.`,
              { data: { runId: this.run.id, key: delivery.key ?? null } },
            );
            this.inflight--;
            reject(this.fatal);
            return;
          }
          const settle = () => {
            this.inflight--;
            if (this.closed) return;
            // Bookkeeping that must happen exactly when the code sees the outcome (a select
            // taking a message), on every execution alike.
            delivery.onDeliver?.();
            if (delivery.ok) resolve(delivery.value as T);
            else reject(delivery.error);
          };
          const options: { expected: boolean; key?: string } = { expected: call.turn === delivery.turn };
          if (delivery.key !== undefined) options.key = delivery.key;
          if (call.turn !== undefined && call.turn !== delivery.turn) this.turns.cancel(call.turn);
          this.turns.ready(delivery.turn, call.no, settle, options);
        },
        (error: unknown) => {
          this.inflight--;
          if (call.turn !== undefined) this.turns.cancel(call.turn);
          else this.turns.advance();
          if (error === SUSPEND || this.closed) return;
          if (CairnError.is(error) && INFRA_CODES.has(error.code)) return this.crash(error);
          reject(error);
        },
      );
    });
  }

  /**
   * Reserves the next delivery turn for this call's outcome, before the write that records it. An
   * outcome new to this execution waits until the replay has caught up with the history: every
   * recorded call made again and every recorded turn handed over. Why: the previous execution may
   * have gone on past its last recorded turn with outcomes nothing records (state reads and
   * writes), and recorded calls made in those turns must fall where they fell then.
   */
  private async claim(call: Call): Promise<number> {
    if (call.turn !== undefined) return call.turn;
    if (!this.caughtUp()) {
      await new Promise<void>((resolve) => this.catchUpWaiters.push(resolve));
      if (this.closed) throw SUSPEND;
      if (call.turn !== undefined) return call.turn;
    }
    call.turn = this.turns.nextTurn();
    this.turns.expect(call.turn);
    return call.turn;
  }

  /** Every recorded call was made again and every recorded turn handed over. */
  private caughtUp(): boolean {
    return this.callIndex > this.maxRecordedSeq && this.turns.turn >= this.turns.maxRecorded;
  }

  /** Lets outcomes that waited for the replay to catch up take their turns. */
  private releaseCaughtUp(): void {
    if (this.catchUpWaiters.length === 0 || !this.caughtUp()) return;
    for (const resolve of this.catchUpWaiters.splice(0)) resolve();
  }

  /**
   * An outcome nothing records (a state read or write): the code sees it in the turn after the
   * call, on every execution alike.
   */
  private claimNext(call: Call): number {
    call.turn = this.turns.turn + 1;
    this.turns.expect(call.turn);
    return call.turn;
  }

  /** The code is quiet and no turn can start: suspend if every branch waits on the store. */
  private quiet(): void {
    if (this.closed || this.finishing) return;
    if (this.inflight > 0) {
      // The next recorded turn waits for a call the code has not made, although the code is quiet
      // and, with other outcomes still to come, could only make it in a turn (a call from outside
      // any turn is refused then): this replay has left the recorded path. Fail instead of holding
      // the lease for ever.
      let missing = this.turns.awaitedNext().find((key) => !this.calledKeys.has(key));
      if (missing === undefined && this.catchUpWaiters.length > 0 && this.turns.turn >= this.turns.maxRecorded && !this.turns.hasOutcomesComing()) {
        // New outcomes wait for recorded calls that the quiet code will not make.
        for (let seq = this.callIndex; seq <= this.maxRecordedSeq && missing === undefined; seq += 1) missing = this.recordedBySeq.get(seq)?.key;
      }
      if (missing === undefined) return;
      if (this.probeKey !== undefined) return this.settle({ kind: 'probe-miss' });
      const step = this.recorded.get(missing);
      this.fatal = new CairnError(
        'NON_DETERMINISM',
        `Run ${this.run.id}: the history has ${step?.kind} ${JSON.stringify(missing)} at #${step?.seq}, but this replay never called it (it is quiet in turn ${this.turns.turn}). The workflow code changed under a running run; register the new code as a new version.`,
        { data: { runId: this.run.id, seq: step?.seq ?? null, expected: missing, actual: null } },
      );
      this.settle({ kind: 'failed', error: toErrorRecord(this.fatal) });
      return;
    }
    // Nothing in flight and no branch waiting: the handler is awaiting its own async work
    // between primitives and will call the next one (or return) later. A probe must wait for
    // it like an execution does, not declare the queued step unreachable.
    if (!this.waiting) return;
    if (this.probeKey !== undefined) return this.settle({ kind: 'probe-miss' });
    const wakeAt = this.wakeTimes.length === 0 ? undefined : Math.min(...this.wakeTimes);
    this.settle({ kind: 'suspended', wakeAt });
  }

  /** Unwinds the current primitive: this branch waits until `wakeAt` (or for news, if undefined). */
  private suspend(wakeAt: number | undefined): never {
    this.waiting = true;
    if (wakeAt !== undefined) this.wakeTimes.push(wakeAt);
    throw SUSPEND;
  }

  /** Assigns the call its key and position and checks them against what was recorded. */
  private begin(kind: StepKind, name: string): Site {
    if (typeof name !== 'string' || name.length === 0 || name.length > 500) {
      throw new CairnError('INVALID_INPUT', `A step name must be a non-empty string of at most 500 characters`);
    }
    if (/#\d+$/.test(name) || name.endsWith(':compensate')) {
      throw new CairnError('INVALID_INPUT', `Step name ${JSON.stringify(name)} is reserved (it ends like a generated key)`);
    }
    const occurrence = (this.occurrences.get(name) ?? 0) + 1;
    this.occurrences.set(name, occurrence);
    const key = occurrence === 1 ? name : `${name}#${occurrence}`;
    const seq = this.callIndex++;
    const recorded = this.recorded.get(key);
    const atSeq = this.recordedBySeq.get(seq);
    if ((recorded && (recorded.kind !== kind || recorded.seq !== seq)) || (!recorded && atSeq)) {
      const found = recorded ?? atSeq;
      this.fatal = new CairnError(
        'NON_DETERMINISM',
        `Run ${this.run.id}: call #${seq} is ${kind} ${JSON.stringify(key)}, but the history has ${found?.kind} ${JSON.stringify(found?.key)} at #${found?.seq}. The workflow code changed under a running run; register the new code as a new version.`,
        { data: { runId: this.run.id, seq, expected: found?.key ?? null, actual: key } },
      );
      throw this.fatal;
    }
    this.calledKeys.add(key);
    // Runs after this call's own synchronous part: an outcome released now takes the next turn.
    if (this.catchUpWaiters.length > 0) queueMicrotask(() => this.releaseCaughtUp());
    return { kind, name, key, seq, recorded };
  }

  private fault(point: FaultPoint, stepKey?: string): void {
    try {
      this.rt.faults.hit(stepKey === undefined ? { point, runId: this.run.id } : { point, runId: this.run.id, stepKey });
    } catch (error) {
      this.crash(error);
      throw SUSPEND;
    }
  }

  /** Every store write of this execution goes through here: fenced, and refused once ended. */
  private async write<T>(op: (fence: number, now: number) => Promise<T>): Promise<T> {
    if (this.closed) throw SUSPEND;
    const result = await op(this.run.fence, this.rt.clock.now());
    if (this.closed) throw SUSPEND;
    return result;
  }

  private insert(site: Site, step: Omit<NewStep, 'key' | 'name' | 'kind' | 'seq'>): Promise<StepRecord> {
    return this.write(async (fence, now) => {
      const full: NewStep = { key: site.key, name: site.name, kind: site.kind, seq: site.seq, ...step };
      return (await this.rt.store.steps.insert(this.run.id, fence, full, now)).step;
    });
  }

  private transition(transition: StepTransition): Promise<StepRecord> {
    return this.write((fence, now) => this.rt.store.steps.transition(this.run.id, fence, transition, now));
  }

  private payload(value: unknown, what: string): Json {
    return toJsonRoundTrip(value, { what, maxBytes: this.rt.maxPayloadBytes }).value;
  }

  // ---------------------------------------------------------------- primitives

  /**
   * A step the history holds as finished: its outcome goes to the code in its recorded turn. A
   * step finished without a turn (by a queued step worker, or before turns were recorded) is
   * given one first, so every later execution delivers it at the same point.
   */
  private async finished(call: Call, site: Site, step: StepRecord, outcome: () => Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }>): Promise<Delivery> {
    if (step.turn !== undefined) return { turn: step.turn, key: site.key, ...(await outcome()) };
    // A probe writes nothing: this outcome was never delivered, so no call it knows of follows it.
    if (this.probeKey !== undefined) this.suspend(undefined);
    const turn = await this.claim(call);
    await this.transition({ key: site.key, from: { status: [step.status], attempt: step.attempt }, to: { status: step.status, turn } });
    return { turn, ...(await outcome()) };
  }

  private async taskStep(call: Call, name: string, fn: (s: StepContext) => unknown, options: StepOptions): Promise<Delivery> {
    checkIdentifier('ctx.step name', name, IDENTIFIER_LIMITS.stepName);
    if (typeof fn !== 'function') throw new CairnError('INVALID_INPUT', `ctx.step(${JSON.stringify(name)}): the body must be a function`);
    const policy = resolveStepRetry(options, this.rt.defaultRetry);
    const timeoutMs = options.timeout === undefined ? undefined : toMilliseconds(options.timeout, `timeout of step ${JSON.stringify(name)}`);
    // `null` means "not set", as for every other step option (and as `compensate` always did).
    const compensate = options.compensate ?? undefined;
    if (compensate !== undefined && typeof compensate !== 'function') throw new CairnError('INVALID_INPUT', `ctx.step(${JSON.stringify(name)}): compensate must be a function`);
    const site = this.begin('task', name);
    // Known from the call on, whatever the step's state: the saga decides from the store which ones run.
    if (compensate !== undefined) this.compensations.set(site.key, { site, compensate, policy, timeoutMs });
    if (this.probeKey !== undefined) {
      if (site.key !== this.probeKey) return this.replayOnly(call, site);
      this.settle({ kind: 'probe-hit', fn, policy, timeoutMs });
      throw SUSPEND;
    }
    const recorded = site.recorded;
    if (recorded?.status === 'failed') {
      return this.finished(call, site, recorded, async () => ({ ok: false, error: this.failStep(site, recorded.error) }));
    }
    if (recorded?.status === 'succeeded') return this.finished(call, site, recorded, async () => ({ ok: true, value: recorded.output }));
    const queued = recorded ? recorded.queued : options.queued === true;
    try {
      const value = queued ? await this.queuedTask(call, site, policy) : await this.inlineTask(site, fn, policy, timeoutMs, call);
      return { turn: await this.claim(call), ok: true, value };
    } catch (error) {
      if (error instanceof StepFailure) {
        const turn = await this.claim(call);
        return { turn, ok: false, error: this.failStep(site, error.record) };
      }
      throw error;
    }
  }

  /**
   * A step failed for good: returns the STEP_FAILED error the code sees. The step is not
   * compensated: it did not complete (its compensation undoes a success, in the run's saga).
   */
  private failStep(site: Site, record: ErrorRecord | undefined): CairnError {
    const error = fromErrorRecord(record ?? { name: 'Error', message: 'step failed' });
    return this.stepFailed(site, error);
  }

  private stepFailed(site: Site, error: Error): CairnError {
    return new CairnError('STEP_FAILED', `Step ${JSON.stringify(site.key)} failed: ${error.message}`, {
      cause: error,
      data: { runId: this.run.id, key: site.key },
    });
  }

  /**
   * Runs the step body inline until it succeeds or fails for good. `call`: the workflow call whose
   * outcome this is (its terminal write reserves the delivery turn); absent for a compensation,
   * whose outcome the code never sees. `signal`: what aborts the body besides its timeout (a
   * compensation runs after cancellation, so it has its own).
   */
  private async inlineTask(site: Site, fn: (s: StepContext) => unknown, policy: RetryPolicy, timeoutMs: number | undefined, call: Call | undefined, signal: AbortSignal = this.abort.signal): Promise<Json | undefined> {
    const worker = this.rt.workerId;
    const turn = async () => (call === undefined ? {} : { turn: await this.claim(call) });
    let step = site.recorded;
    if (!step) {
      step = await this.insert(site, { status: 'running', maxAttempts: policy.maxAttempts, worker });
      if (step.status !== 'running' || step.attempt !== 1) return this.inlineTask({ ...site, recorded: step }, fn, policy, timeoutMs, call, signal);
    } else if (step.status === 'running') {
      // We hold the lease, so whoever ran this attempt is gone: it was abandoned.
      if (step.attempt >= step.maxAttempts + ABANDON_GRACE) {
        const error = toErrorRecord(new CairnError('ATTEMPT_ABANDONED', `Step ${JSON.stringify(site.key)}: every attempt was abandoned by a crashing worker`));
        await this.transition({ key: site.key, from: { status: ['running'], attempt: step.attempt }, to: { status: 'failed', error, ...(await turn()) }, endAttempt: { status: 'abandoned', error } });
        throw new StepFailure(error);
      }
      step = await this.transition({
        key: site.key,
        from: { status: ['running'], attempt: step.attempt },
        to: { status: 'running', attempt: step.attempt + 1 },
        endAttempt: { status: 'abandoned' },
        startAttempt: { worker },
      });
    } else if (step.status === 'retry_wait') {
      step = await this.awaitRetry(site, step, signal);
    }
    for (;;) {
      const attempt = step.attempt;
      const result = await runStepBody(this.rt.clock, fn, { runId: this.run.id, key: site.key, attempt }, timeoutMs, signal);
      this.fault('after-step-body', site.key);
      // The run's saga has begun: a workflow step's late outcome is not recorded (the saga failed
      // the step, or is about to), so it can never succeed after its compensation was skipped.
      if (this.sealed && call !== undefined) throw SUSPEND;
      let output: Json | undefined;
      // One decision for inline and queued steps (`decideRetry`): attempts left, not
      // non-retryable, accepted by `retryIf`; the wait is `retryAfter` or the backoff.
      let decision: RetryDecision = result.ok ? { retry: false } : decideRetry(policy, result.error, attempt, step.maxAttempts);
      let failure = result.ok ? undefined : toErrorRecord(decision.retry ? result.error : (decision.error ?? result.error));
      if (result.ok && result.value !== undefined) {
        try {
          output = this.payload(result.value, `output of step ${JSON.stringify(site.key)}`);
        } catch (error) {
          // Retrying cannot make a value serialisable: fail without further attempts.
          failure = toErrorRecord(error);
          decision = { retry: false };
        }
      }
      const from = { status: ['running' as const], attempt };
      if (failure === undefined) {
        this.fault('before-checkpoint', site.key);
        const to = output === undefined ? { status: 'succeeded' as const, ...(await turn()) } : { status: 'succeeded' as const, output, ...(await turn()) };
        await this.transition({ key: site.key, from, to, endAttempt: { status: 'succeeded' } });
        this.fault('after-checkpoint', site.key);
        return output;
      }
      if (this.cancelled && call !== undefined) throw this.cancelError;
      if (decision.retry) {
        const wakeAt = this.rt.clock.now() + decision.delayMs;
        this.fault('before-checkpoint', site.key);
        step = await this.transition({ key: site.key, from, to: { status: 'retry_wait', wakeAt }, endAttempt: { status: 'failed', error: failure } });
        this.fault('after-checkpoint', site.key);
        step = await this.awaitRetry(site, step, signal);
        continue;
      }
      this.fault('before-checkpoint', site.key);
      await this.transition({ key: site.key, from, to: { status: 'failed', error: failure, ...(await turn()) }, endAttempt: { status: 'failed', error: failure } });
      this.fault('after-checkpoint', site.key);
      throw new StepFailure(failure);
    }
  }

  /** Waits out a retry delay in place when short, else suspends; then opens the next attempt. */
  private async awaitRetry(site: Site, step: StepRecord, signal: AbortSignal): Promise<StepRecord> {
    const wait = (step.wakeAt ?? 0) - this.rt.clock.now();
    if (wait > this.rt.timings.inlineRetryMaxMs) this.suspend(step.wakeAt);
    if (wait > 0) await this.rt.clock.sleep(wait, signal);
    return this.transition({
      key: site.key,
      from: { status: ['retry_wait'], attempt: step.attempt },
      to: { status: 'running', attempt: step.attempt + 1, wakeAt: null },
      startAttempt: { worker: this.rt.workerId },
    });
  }

  /** A step whose body runs on the step queue: record the dispatch, send it, watch it. */
  private async queuedTask(call: Call, site: Site, policy: RetryPolicy): Promise<Json | undefined> {
    const { dispatchTimeoutMs } = this.rt.timings;
    const now = this.rt.clock.now();
    let step = site.recorded;
    if (!step) {
      step = await this.insert(site, { status: 'scheduled', queued: true, maxAttempts: policy.maxAttempts, wakeAt: now + dispatchTimeoutMs });
      await this.rt.dispatchStep(this.run.id, this.run.workflow, site.key, step.attempt);
      this.suspend(step.wakeAt);
    }
    const due = step.wakeAt === undefined || step.wakeAt <= now;
    if (!due) this.suspend(step.wakeAt);
    const from = { status: [step.status], attempt: step.attempt };
    let next: StepTransition;
    if (step.status === 'scheduled') {
      next = { key: site.key, from, to: { status: 'scheduled', wakeAt: now + dispatchTimeoutMs } };
    } else if (step.status === 'running') {
      if (step.attempt >= step.maxAttempts + ABANDON_GRACE) {
        const error = toErrorRecord(new CairnError('ATTEMPT_ABANDONED', `Step ${JSON.stringify(site.key)}: every attempt was abandoned by a crashing worker`));
        await this.queuedWrite({ key: site.key, from, to: { status: 'failed', error, turn: await this.claim(call) }, endAttempt: { status: 'abandoned', error } });
        throw new StepFailure(error);
      }
      next = { key: site.key, from, to: { status: 'scheduled', attempt: step.attempt + 1, wakeAt: now + dispatchTimeoutMs }, endAttempt: { status: 'abandoned' } };
    } else {
      next = { key: site.key, from, to: { status: 'scheduled', attempt: step.attempt + 1, wakeAt: now + dispatchTimeoutMs } };
    }
    const written = await this.queuedWrite(next);
    await this.rt.dispatchStep(this.run.id, this.run.workflow, site.key, written.attempt);
    this.suspend(written.wakeAt);
  }

  /** A write racing the step worker: losing the race only means the step moved on; look again soon. */
  private async queuedWrite(transition: StepTransition): Promise<StepRecord> {
    try {
      return await this.transition(transition);
    } catch (error) {
      if (CairnError.is(error, 'STEP_CONFLICT')) this.suspend(this.rt.clock.now());
      throw error;
    }
  }

  /** Probe mode: serve what is recorded (in its turn), wait on everything else. */
  private async replayOnly(call: Call, site: Site): Promise<Delivery> {
    const step = site.recorded;
    if (step?.turn === undefined) this.suspend(undefined);
    if (step.status === 'succeeded') return this.finished(call, site, step, async () => ({ ok: true, value: step.output }));
    if (step.status === 'failed') {
      const error = fromErrorRecord(step.error ?? { name: 'Error', message: 'failed' });
      return this.finished(call, site, step, async () => ({ ok: false, error: step.kind === 'task' ? this.stepFailed(site, error) : error }));
    }
    this.suspend(undefined);
  }

  private async sleepStep(call: Call, name: string, wakeAt: number): Promise<Delivery> {
    checkIdentifier('ctx.sleep name', name, IDENTIFIER_LIMITS.stepName);
    const site = this.begin('sleep', name);
    if (this.probeKey !== undefined) return this.replayOnly(call, site);
    let step = site.recorded;
    if (step?.status === 'succeeded') return this.finished(call, site, step, async () => ({ ok: true, value: undefined }));
    const now = this.rt.clock.now();
    if (!step) {
      if (wakeAt <= now) {
        const turn = await this.claim(call);
        await this.insert(site, { status: 'succeeded', maxAttempts: 1, wakeAt, turn });
        return { turn, ok: true, value: undefined };
      }
      step = await this.insert(site, { status: 'waiting', maxAttempts: 1, wakeAt });
    }
    if ((step.wakeAt ?? 0) > now) this.suspend(step.wakeAt);
    const turn = await this.claim(call);
    await this.transition({ key: site.key, from: { status: ['waiting'], attempt: step.attempt }, to: { status: 'succeeded', turn } });
    return { turn, ok: true, value: undefined };
  }

  private async eventStep(call: Call, event: unknown, options: WaitForEventOptions): Promise<Delivery> {
    // The same rule as engine.sendEvent, so no name can be sent that no wait accepts.
    const eventName = checkEventName('ctx.waitForEvent name', eventNameOf(event));
    const timeoutMs = options.timeout === undefined ? undefined : toMilliseconds(options.timeout, `timeout of event ${JSON.stringify(eventName)}`);
    const site = this.begin('event', `event:${eventName}`);
    // The message this wait takes: the next one of its name that no earlier wait took or still
    // waits for. It depends on the order of calls and outcomes only (both replayed exactly), never
    // on timing. A wait that times out gives its message back (see `releaseMessage`).
    const seq = this.reserveMessage(eventName);
    const release = () => this.releaseMessage(eventName, seq);
    if (this.probeKey !== undefined) {
      const delivery = await this.replayOnly(call, site);
      return delivery.ok ? delivery : { ...delivery, onDeliver: release };
    }
    let step = site.recorded;
    if (step?.status === 'succeeded') {
      const output = step.output ?? null;
      return this.finished(call, site, step, async () => ({ ok: true, value: output }));
    }
    if (step?.status === 'failed') {
      const error = fromErrorRecord(step.error ?? { name: 'Error', message: 'event wait failed' });
      return { ...(await this.finished(call, site, step, async () => ({ ok: false, error }))), onDeliver: release };
    }
    const message = await this.rt.store.events.get(this.run.id, eventName, seq);
    const now = this.rt.clock.now();
    if (!step) {
      if (message) {
        const turn = await this.claim(call);
        this.fault('before-checkpoint', site.key);
        await this.insert(site, { status: 'succeeded', maxAttempts: 1, output: message.payload, turn });
        this.fault('after-checkpoint', site.key);
        return { turn, ok: true, value: message.payload };
      }
      const wait: Omit<NewStep, 'key' | 'name' | 'kind' | 'seq'> = { status: 'waiting', maxAttempts: 1 };
      if (timeoutMs !== undefined) wait.wakeAt = now + timeoutMs;
      step = await this.insert(site, wait);
    }
    const from = { status: ['waiting' as const], attempt: step.attempt };
    if (message) {
      const turn = await this.claim(call);
      this.fault('before-checkpoint', site.key);
      await this.transition({ key: site.key, from, to: { status: 'succeeded', output: message.payload, wakeAt: null, turn } });
      this.fault('after-checkpoint', site.key);
      return { turn, ok: true, value: message.payload };
    }
    if (step.wakeAt !== undefined && step.wakeAt <= now) {
      const error = new CairnError('EVENT_TIMEOUT', `No event ${JSON.stringify(eventName)} arrived before the timeout`, { data: { runId: this.run.id, event: eventName } });
      const turn = await this.claim(call);
      await this.transition({ key: site.key, from, to: { status: 'failed', error: toErrorRecord(error), turn } });
      return { turn, ok: false, error, onDeliver: release };
    }
    this.suspend(step.wakeAt);
  }

  /** Reserves the next message of `name` for a wait (1, 2, ...). */
  private reserveMessage(name: string): number {
    const seq = this.messageCursor.get(name) ?? 1;
    this.messageCursor.set(name, seq + 1);
    return seq;
  }

  /**
   * A wait for message `seq` of `name` timed out: the message goes to the next wait of that name,
   * when no later wait of it reserved one meanwhile (concurrent waits of one name keep their places).
   */
  private releaseMessage(name: string, seq: number): void {
    if ((this.messageCursor.get(name) ?? 1) === seq + 1) this.messageCursor.set(name, seq);
  }

  /**
   * `ctx.child` (and `ctx.childOutcome`): starts the child once, then waits for it. The wait has no
   * timer but the long backstop (`childBackstopMs`): the child's end wakes this run (see
   * `wakeParent`), so this run is not replayed while its child runs.
   */
  private async childStep(call: Call, workflow: WorkflowDefinition<any, any> | string, input: unknown, options: ChildOptions, what = 'ctx.child'): Promise<Delivery> {
    const childName = typeof workflow === 'string' ? workflow : workflow?.name;
    const childDef = this.rt.registry.forStart(childName);
    if (typeof options === 'object' && options !== null && 'name' in options) checkIdentifier(`${what} options.name`, options.name, IDENTIFIER_LIMITS.stepName);
    const site = this.begin('child', options.name ?? `child:${childName}`);
    if (this.probeKey !== undefined) return this.replayOnly(call, site);
    let step = site.recorded;
    if (step?.status === 'succeeded') {
      const output = step.output;
      return this.finished(call, site, step, async () => ({ ok: true, value: output }));
    }
    if (step?.status === 'failed') {
      const error = fromErrorRecord(step.error ?? { name: 'Error', message: 'child failed' });
      return this.finished(call, site, step, async () => ({ ok: false, error }));
    }
    const { childBackstopMs } = this.rt.timings;
    if (!step) {
      const childInput = this.payload(input ?? null, `input of child ${JSON.stringify(childName)}`);
      const { run: child } = await this.write((_fence, now) =>
        this.rt.store.runs.create(
          {
            id: uuidv7(now),
            workflow: childName,
            version: childDef.version,
            input: childInput,
            parent: { runId: this.run.id, stepKey: site.key },
            // Makes the create idempotent across a crash before the step is recorded.
            idempotencyKey: `$child:${this.run.id}:${site.key}`,
            ...childStart(this.run.deadline, childDef.options.deadline, now + this.rt.timings.startGraceMs, now),
          },
          now,
        ),
      );
      this.fault('before-checkpoint', site.key);
      step = await this.insert(site, { status: 'waiting', maxAttempts: 1, childRunId: child.id });
      this.fault('after-checkpoint', site.key);
      this.children.add(child.id);
      await this.rt.dispatchRun(child.id, child.workflow);
      this.suspend(this.rt.clock.now() + childBackstopMs);
    }
    const childId = step.childRunId as string;
    const child = await this.lastOfChain(childId);
    const from = { status: ['waiting' as const], attempt: step.attempt };
    if (child?.status === 'completed') {
      const turn = await this.claim(call);
      await this.transition({ key: site.key, from, to: child.output === undefined ? { status: 'succeeded', turn } : { status: 'succeeded', output: child.output, turn } });
      return { turn, ok: true, value: child.output };
    }
    if (!child || child.status === 'failed' || child.status === 'cancelled') {
      const status = child?.status ?? 'deleted';
      const options: { cause?: unknown; data: Json } = { data: { runId: this.run.id, childRunId: childId, status } };
      if (child?.error) options.cause = fromErrorRecord(child.error);
      const error = new CairnError('CHILD_FAILED', `Child run ${childId} (${childName}) ${status}${child?.error ? `: ${child.error.message}` : ''}`, options);
      const turn = await this.claim(call);
      await this.transition({ key: site.key, from, to: { status: 'failed', error: toErrorRecord(error), turn } });
      return { turn, ok: false, error };
    }
    this.children.add(childId);
    this.suspend(this.rt.clock.now() + childBackstopMs);
  }

  /** `ctx.childOutcome`: the child's end, as `ctx.child` delivers it, becomes a value (see `childOutcomeOf`). */
  private asChildOutcome(delivery: Delivery): Delivery {
    const { turn, key } = delivery;
    return { turn, ...(key === undefined ? {} : { key }), ok: true, value: childOutcomeOf(delivery) };
  }

  /**
   * `ctx.startChild`: creates the child once (idempotent on `$child:<run id>:<step key>`, as
   * `ctx.child`) and records a succeeded step holding its id in the same write as the turn, so a
   * replay returns the same id. The child has no `parent` (nothing wakes this run when it ends),
   * is not in `children` (a cancel of this run leaves it running) and does not take this run's
   * deadline.
   */
  private async startChildStep(call: Call, workflow: WorkflowDefinition<any, any> | string, input: unknown, options: StartChildOptions): Promise<Delivery> {
    const childName = typeof workflow === 'string' ? workflow : workflow?.name;
    const childDef = this.rt.registry.forStart(childName);
    if (options.name !== undefined) checkIdentifier('ctx.startChild options.name', options.name, IDENTIFIER_LIMITS.stepName);
    const site = this.begin('child', options.name ?? `startChild:${childName}`);
    if (this.probeKey !== undefined) return this.replayOnly(call, site);
    const recorded = site.recorded;
    if (recorded) {
      if (recorded.status !== 'succeeded' || recorded.childRunId === undefined) {
        this.fatal = new CairnError(
          'NON_DETERMINISM',
          `Run ${this.run.id}: ctx.startChild ${JSON.stringify(site.key)} meets a child step the history holds as ${recorded.status} (an awaited ctx.child). The workflow code changed under a running run; register the new code as a new version.`,
          { data: { runId: this.run.id, seq: site.seq, expected: site.key, actual: site.key } },
        );
        throw this.fatal;
      }
      const id = recorded.childRunId;
      return this.finished(call, site, recorded, async () => ({ ok: true, value: id }));
    }
    const childInput = this.payload(input ?? null, `input of child ${JSON.stringify(childName)}`);
    const { run: child } = await this.write((_fence, now) =>
      this.rt.store.runs.create(
        {
          id: uuidv7(now),
          workflow: childName,
          version: childDef.version,
          input: childInput,
          // Makes the create idempotent across a crash before the step is recorded.
          idempotencyKey: `$child:${this.run.id}:${site.key}`,
          // Detached: bound by its own workflow's default deadline only, not by this run's.
          ...childStart(undefined, childDef.options.deadline, now + this.rt.timings.startGraceMs, now),
        },
        now,
      ),
    );
    const turn = await this.claim(call);
    this.fault('before-checkpoint', site.key);
    await this.insert(site, { status: 'succeeded', maxAttempts: 1, childRunId: child.id, output: child.id, turn });
    this.fault('after-checkpoint', site.key);
    // Lost with a crash here, the dispatch is made up by recovery (the child is due at start grace).
    await this.rt.dispatchRun(child.id, child.workflow);
    return { turn, ok: true, value: child.id };
  }

  private async setState(call: Call, key: string, value: Json): Promise<Delivery> {
    checkIdentifier('ctx.setState key', key, IDENTIFIER_LIMITS.stateKey, { allowEmpty: true });
    const json = this.payload(value, `state ${JSON.stringify(key)}`);
    const turn = this.claimNext(call);
    // A probe writes nothing, but later reads in its replay must see this value, as the
    // execution that scheduled the queued step did.
    if (this.probeKey === undefined) await this.write((fence, now) => this.rt.store.state.set(this.run.id, fence, key, json, now));
    this.stateOverlay.set(key, json);
    return { turn, ok: true, value: undefined };
  }

  private async readState(call: Call, key: string): Promise<Delivery> {
    checkIdentifier('ctx.state key', key, IDENTIFIER_LIMITS.stateKey, { allowEmpty: true });
    const turn = this.claimNext(call);
    if (this.stateOverlay.has(key)) return { turn, ok: true, value: this.stateOverlay.get(key) };
    this.stateSnapshot ??= await this.rt.store.state.get(this.run.id);
    // A write of this key may have been made while the snapshot was read.
    return { turn, ok: true, value: this.stateOverlay.has(key) ? this.stateOverlay.get(key) : this.stateSnapshot[key] };
  }

  private async recordedValue(call: Call, kind: 'now' | 'random' | 'uuid', make: () => Json): Promise<Delivery> {
    const site = this.begin(kind, `$${kind}`);
    const recorded = site.recorded;
    if (recorded) return this.finished(call, site, recorded, async () => ({ ok: true, value: recorded.output }));
    if (this.probeKey !== undefined) this.suspend(undefined);
    const output = make();
    const turn = await this.claim(call);
    await this.insert(site, { status: 'succeeded', maxAttempts: 1, output, turn });
    return { turn, ok: true, value: output };
  }

  /**
   * Creates the successor (idempotent on `$continue:<run id>`), records it as the `$continue` step,
   * and completes this run pointing at it. Replayed, it only completes again with the same successor.
   */
  private async continueAsNew(call: Call, input: unknown): Promise<Delivery> {
    const json = this.payload(input ?? null, `input of continueAsNew`);
    const site = this.begin('child', '$continue');
    if (this.probeKey !== undefined) this.suspend(undefined);
    let successorId = site.recorded?.childRunId;
    if (successorId === undefined) {
      const def = this.rt.registry.forStart(this.run.workflow);
      const { run: successor } = await this.write((_fence, now) =>
        this.rt.store.runs.create(
          {
            id: uuidv7(now),
            workflow: this.run.workflow,
            version: def.version,
            input: json,
            // One successor, whatever crashes: a repeated create returns the first one.
            idempotencyKey: `$continue:${this.run.id}`,
            // A child that continues as new stays its parent's child: the successor's end wakes it.
            ...(this.run.parent === undefined ? {} : { parent: this.run.parent }),
            ...(this.run.deadline === undefined ? {} : { deadline: this.run.deadline }),
            wakeAt: now + this.rt.timings.startGraceMs,
          },
          now,
        ),
      );
      await this.insert(site, { status: 'succeeded', maxAttempts: 1, childRunId: successor.id });
      await this.rt.dispatchRun(successor.id, successor.workflow);
      successorId = successor.id;
    }
    this.settle({ kind: 'completed', output: { [CONTINUED_AS]: successorId } });
    throw SUSPEND;
  }

  /**
   * `ctx.select`: waits for the first of several events, timers and children, records which won
   * (and its value) as one step, and hands that back on every replay. Losing children are
   * cancelled; a losing event's message is not taken (the next wait of that name gets it).
   */
  private async selectStep(call: Call, name: string, alternatives: unknown): Promise<Delivery> {
    checkIdentifier('ctx.select name', name, IDENTIFIER_LIMITS.stepName);
    const alts = checkAlternatives(name, alternatives, this.rt.clock.now());
    const site = this.begin('select', name);
    // The message each event alternative would take: the next one no wait of that name took yet.
    const messageOf = (event: string) => this.messageCursor.get(event) ?? 1;
    const taken = (output: Json | undefined) => () => {
      const won = output as { kind?: string; event?: string; seq?: number } | undefined;
      if (won?.kind !== 'event' || typeof won.event !== 'string' || typeof won.seq !== 'number') return;
      this.messageCursor.set(won.event, Math.max(this.messageCursor.get(won.event) ?? 1, won.seq + 1));
    };
    const recordedDelivery = async (step: StepRecord): Promise<Delivery> => {
      const { winner, kind, value } = step.output as { winner: string; kind: string; value: Json };
      return { ...(await this.finished(call, site, step, async () => ({ ok: true, value: { winner, kind, value } }))), onDeliver: taken(step.output) };
    };
    if (this.probeKey !== undefined) {
      if (site.recorded?.status === 'succeeded' && site.recorded.turn !== undefined) return recordedDelivery(site.recorded);
      this.suspend(undefined);
    }
    let step = site.recorded;
    if (step?.status === 'succeeded') return recordedDelivery(step);
    const timers = alts.flatMap((alt) => (alt.kind === 'timer' ? [alt.wakeAt] : []));
    if (!step) {
      const wait: Omit<NewStep, 'key' | 'name' | 'kind' | 'seq'> = { status: 'waiting', maxAttempts: 1 };
      if (timers.length > 0) wait.wakeAt = Math.min(...timers);
      step = await this.insert(site, wait);
    }
    // The timers count from the first execution's call: its earliest deadline is the step's wakeAt,
    // and the others keep their distance from it.
    const shift = step.wakeAt === undefined || timers.length === 0 ? 0 : step.wakeAt - Math.min(...timers);
    const children = new Map<string, string>();
    for (const alt of alts) {
      if (alt.kind !== 'child') continue;
      const def = this.rt.registry.forStart(alt.workflow);
      const input = this.payload(alt.input, `input of child ${JSON.stringify(alt.workflow)}`);
      const { run: child, created } = await this.write((_fence, now) =>
        this.rt.store.runs.create(
          {
            id: uuidv7(now),
            workflow: alt.workflow,
            version: def.version,
            input,
            parent: { runId: this.run.id, stepKey: site.key },
            // One child per alternative, whatever crashes; each look finds the same one.
            idempotencyKey: `$child:${this.run.id}:${site.key}/${alt.key}`,
            wakeAt: now + this.rt.timings.startGraceMs,
          },
          now,
        ),
      );
      children.set(alt.key, child.id);
      this.children.add(child.id);
      if (created) await this.rt.dispatchRun(child.id, child.workflow);
    }
    const now = this.rt.clock.now();
    let won: Json | undefined;
    for (const alt of alts) {
      won = await this.lookAt(alt, now, shift, children, messageOf);
      if (won !== undefined) break;
    }
    if (won === undefined) this.suspend(step.wakeAt);
    // Losing children are cancelled (and told at once when they run here).
    const winner = (won as { winner: string }).winner;
    for (const [key, childId] of children) {
      if (key === winner) continue;
      const child = await this.rt.store.runs.requestCancel(childId, this.rt.clock.now());
      if (child && child.status !== 'completed' && child.status !== 'failed' && child.status !== 'cancelled') {
        this.rt.executing.get(child.id)?.observeCancel(cancelledError(child.id, child.cancelReason));
        await this.rt.dispatchRun(child.id, child.workflow);
      }
    }
    const turn = await this.claim(call);
    await this.transition({ key: site.key, from: { status: ['waiting'], attempt: step.attempt }, to: { status: 'succeeded', output: won as Json, wakeAt: null, turn } });
    const { kind, value } = won as { kind: string; value: Json };
    return { turn, ok: true, value: { winner, kind, value }, onDeliver: taken(won) };
  }

  /** Whether one select alternative is ready now; its recorded outcome if so. */
  private async lookAt(alt: CheckedAlternative, now: number, shift: number, children: Map<string, string>, messageOf: (event: string) => number): Promise<Json | undefined> {
    if (alt.kind === 'timer') return alt.wakeAt + shift <= now ? { winner: alt.key, kind: 'timer', value: null } : undefined;
    if (alt.kind === 'event') {
      const seq = messageOf(alt.event);
      const message = await this.rt.store.events.get(this.run.id, alt.event, seq);
      return message ? { winner: alt.key, kind: 'event', value: message.payload, event: alt.event, seq } : undefined;
    }
    const child = await this.lastOfChain(children.get(alt.key) as string);
    if (child?.status === 'completed') return { winner: alt.key, kind: 'child', value: { ok: true, output: child.output ?? null } };
    if (!child || child.status === 'failed' || child.status === 'cancelled') {
      return { winner: alt.key, kind: 'child', value: { ok: false, status: child?.status ?? 'deleted', error: (child?.error ?? null) as Json } };
    }
    return undefined;
  }

  /** The run, or the last run of its continue-as-new chain (a child that continued as new). */
  private async lastOfChain(runId: string): Promise<RunRecord | undefined> {
    let run = await this.rt.store.runs.get(runId);
    for (let next = run?.status === 'completed' ? continuedAs(run.output) : undefined; next !== undefined; next = run?.status === 'completed' ? continuedAs(run.output) : undefined) {
      run = await this.rt.store.runs.get(next);
    }
    return run;
  }
}
