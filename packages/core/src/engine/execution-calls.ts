// The life of one primitive call, from the moment workflow code makes it to the moment the code
// sees its outcome: its key and position (checked against the history), its delivery turn
// (decision 20), when the code is quiet and the execution suspends, and how the execution ends.
// Separate because every primitive goes through it and none of it touches the store: it is the
// replay's determinism, readable on its own. The layers above add the store writes, the
// primitives and the run's outcome (decision 44).
import { CairnError } from '../errors/cairn-error.js';
import { toErrorRecord } from '../errors/error-record-codec.js';
import type { RunRecord } from '../model/run.js';
import type { StepKind, StepRecord } from '../model/step.js';
import type { SuspendReason } from '../observe/lifecycle-events.js';
import type { AnyWorkflowDefinition } from './any-workflow-definition.js';
import type { EngineRuntime } from './engine-runtime.js';
import { cancelledError, INFRA_CODES, type Outcome, type Site } from './execution-outcome.js';
import { TurnScheduler } from './turn-scheduler.js';
import { callerLocation, type Divergence, type DivergenceCall, divergenceError, recordedCall } from './divergence.js';

/**
 * The probe key of a pre-deploy check's replay (`checkRuns`): no call has it, so the replay never
 * runs a body; it writes nothing and ends with a verdict instead of suspending.
 */
export const CHECK_PROBE_KEY = '$check';

// Returned by primitives that cannot continue in this execution; never settles, so the handler
// simply stops there (the next execution replays past it).
export const NEVER: Promise<never> = new Promise(() => {});
// Thrown inside a primitive to unwind it when it must wait; turned into NEVER by `guard`.
export const SUSPEND = Symbol('suspend');

/**
 * One primitive call: its number in call order, the delivery turn it reserved (if any), and, once
 * its outcome is ready, that outcome and how to hand it to the code. A class rather than closures
 * per call: those were a visible share of an inline step's CPU (issue 18).
 */
export class Call {
  turn: number | undefined = undefined;
  /** The outcome, once ready: handed over in its turn (see `ExecutionCalls.handOver`). */
  delivery: Delivery | undefined = undefined;
  resolve: (value: unknown) => void = ignore;
  reject: (error: unknown) => void = ignore;

  constructor(readonly no: number) {}
}

function ignore(): void {}

/**
 * A primitive's outcome and the turn in which workflow code may see it. `key`: the recorded step it
 * replays (its turn waits for it).
 */
export type Delivery = { turn: number; key?: string; onDeliver?: () => void } & ({ ok: true; value: unknown } | { ok: false; error: unknown });

/**
 * The bottom layer of an execution: the recorded history as the replay meets it, the turn
 * scheduler, the guard around each call, key assignment and its checks, quiet detection and
 * suspension, and how an execution ends (`settle`). Writes nothing.
 */
export class ExecutionCalls {
  protected readonly recorded = new Map<string, StepRecord>();
  protected readonly recordedBySeq = new Map<number, StepRecord>();
  protected readonly occurrences = new Map<string, number>();
  protected readonly abort = new AbortController();
  /** Keys called in this execution (a recorded turn must not wait for a key never called). */
  protected readonly calledKeys = new Set<string>();
  /** The highest position the history recorded a call at (-1: none). */
  protected readonly maxRecordedSeq: number;
  /**
   * Outcomes waiting for the replay to catch up with the history (see `claim`); `untimed`: the
   * recorded step a waiter replays when it finished without a turn (see `releaseUntimed`).
   */
  protected readonly catchUpWaiters: { resolve: () => void; untimed?: StepRecord }[] = [];
  /** True once an outcome recorded without a turn was delivered in completion order (`releaseUntimed`). */
  protected untimedReleased = false;
  /** A pre-deploy check's replay (see `CHECK_PROBE_KEY`). */
  protected readonly checking: boolean;
  protected callIndex = 0;
  protected callNo = 0;
  protected inflight = 0;
  protected readonly turns: TurnScheduler<Call>;
  protected readonly wakeTimes: number[] = [];
  /** Why branches wait (reported with the suspension; see `SuspendReason`). */
  protected readonly suspendReasons = new Set<SuspendReason>();
  protected waiting = false;
  protected finishing = false;
  protected closed = false;
  protected cancelled: boolean;
  // Made on first use: most executions are never cancelled, and an error (its stack captured)
  // per execution was a visible share of a short run's CPU (issue 18).
  private cancelErrorMade: CairnError | undefined;
  /** What ends the run once `cancelled`: CANCELLED (with the cancel's reason) or DEADLINE_EXCEEDED. */
  protected get cancelError(): CairnError {
    this.cancelErrorMade ??= cancelledError(this.run.id, this.run.cancelReason);
    return this.cancelErrorMade;
  }
  protected set cancelError(error: CairnError) {
    this.cancelErrorMade = error;
  }
  protected fatal: CairnError | undefined;
  // Aborts compensation bodies when the execution ends (`abort` fires at cancellation already);
  // made when a saga first needs it: most executions run none.
  private sagaAbort: AbortController | undefined;
  protected settleOutcome: ((outcome: Outcome) => void) | undefined;
  /**
   * The trace context this execution continues in: the run's, or what a lifecycle subscriber set
   * as `executionTraceContext` (its execution span). Runs this execution starts and the queued
   * steps it dispatches carry it, so they join its trace under it.
   */
  traceContext: Record<string, string> | undefined;

  constructor(
    protected readonly rt: EngineRuntime,
    protected readonly run: RunRecord,
    steps: readonly StepRecord[],
    protected readonly def: AnyWorkflowDefinition,
    protected readonly probeKey?: string,
  ) {
    let maxSeq = -1;
    for (const step of steps) {
      this.recorded.set(step.key, step);
      // Compensation steps share their step's seq; the position check only covers primary calls.
      if (step.key.endsWith(':compensate')) continue;
      this.recordedBySeq.set(step.seq, step);
      maxSeq = Math.max(maxSeq, step.seq);
    }
    this.traceContext = run.traceContext;
    this.cancelled = run.cancelRequested && probeKey === undefined;
    this.checking = probeKey === CHECK_PROBE_KEY;
    this.turns = new TurnScheduler<Call>(
      steps,
      (call) => this.handOver(call),
      () => this.quiet(),
      rt.turnsInProgress,
      () => this.releaseCaughtUp(),
    );
    // Computed in the loop: spreading a long history into Math.max overflows the call stack.
    this.maxRecordedSeq = maxSeq;
  }

  /** Abandons the execution with no further write (lease lost, store down, simulated crash). */
  crash(error: unknown): void {
    this.settle({ kind: 'crashed', error });
  }

  protected settle(outcome: Outcome): void {
    if (this.closed) return;
    this.closed = true;
    this.turns.stop();
    if (!this.abort.signal.aborted) this.abort.abort(new CairnError('ENGINE_STOPPED', 'execution ended'));
    if (this.sagaAbort !== undefined && !this.sagaAbort.signal.aborted) this.sagaAbort.abort(new CairnError('ENGINE_STOPPED', 'execution ended'));
    this.settleOutcome?.(outcome);
  }

  /** The signal of compensation bodies and saga waits: aborted when the execution ends. */
  protected get sagaSignal(): AbortSignal {
    if (this.sagaAbort === undefined) {
      this.sagaAbort = new AbortController();
      if (this.closed) this.sagaAbort.abort(new CairnError('ENGINE_STOPPED', 'execution ended'));
    }
    return this.sagaAbort.signal;
  }

  /**
   * Wraps every primitive: refuses work once the execution ended, counts calls whose outcome the
   * code has not seen yet, and hands each outcome over in its turn (see TurnScheduler). Errors
   * raised before the primitive touched the store (bad arguments) reach the code at once.
   */
  protected guard<T>(body: (call: Call) => Promise<Delivery>): Promise<T> {
    if (this.closed) return NEVER;
    if (this.fatal) return Promise.reject(this.fatal);
    if (this.cancelled) return Promise.reject(this.cancelError);
    if (this.turns.drained && this.inflight > 0) {
      // The code resumed outside any turn (it awaited a timer or I/O rather than a primitive)
      // while other branches wait for outcomes: where this call falls among theirs depends on
      // timing, so no replay could give every call its own record. Refuse before anything is written.
      return Promise.reject(this.diverge({ reason: 'untracked-await', seq: null, recorded: null, called: null, location: callerLocation() }));
    }
    const call = new Call(this.callNo++);
    this.inflight++;
    let promise: Promise<Delivery>;
    try {
      promise = body(call);
    } catch (error) {
      promise = Promise.reject(error);
    }
    const result = new Promise<T>((resolve, reject) => {
      call.resolve = resolve as (value: unknown) => void;
      call.reject = reject;
    });
    promise.then(
      (delivery) => this.outcomeReady(call, delivery),
      (error: unknown) => this.outcomeFailed(call, error),
    );
    return result;
  }

  /** A call's outcome is ready: it waits for its turn (or the replay left the recorded path). */
  private outcomeReady(call: Call, delivery: Delivery): void {
    if (this.closed) return;
    if (delivery.turn <= this.turns.turn) {
      const step = delivery.key === undefined ? undefined : this.recorded.get(delivery.key);
      const error = this.diverge({ reason: 'late-call', seq: step?.seq ?? null, recorded: recordedCall(step), called: recordedCall(step) });
      this.inflight--;
      call.reject(error);
      return;
    }
    call.delivery = delivery;
    const expected = call.turn === delivery.turn;
    if (call.turn !== undefined && call.turn !== delivery.turn) this.turns.cancel(call.turn);
    this.turns.ready(delivery.turn, call, expected, delivery.key);
  }

  /** A call's turn came: the code sees its outcome now. */
  private handOver(call: Call): void {
    this.inflight--;
    if (this.closed) return;
    const delivery = call.delivery as Delivery;
    // Bookkeeping that must happen exactly when the code sees the outcome (a select taking a
    // message), on every execution alike.
    delivery.onDeliver?.();
    if (delivery.ok) call.resolve(delivery.value);
    else call.reject(delivery.error);
  }

  /** A call ended without an outcome for a turn: an error the code sees at once, or a suspension. */
  private outcomeFailed(call: Call, error: unknown): void {
    this.inflight--;
    // An error the code will see: its continuation runs before quiet is looked for, else a
    // branch suspended meanwhile could end the execution with the error never delivered.
    const delivered = error !== SUSPEND && !this.closed && !(CairnError.is(error) && INFRA_CODES.has(error.code));
    if (delivered) this.turns.resumed();
    if (call.turn !== undefined) this.turns.cancel(call.turn);
    else this.turns.advance();
    if (error === SUSPEND || this.closed) return;
    if (CairnError.is(error) && INFRA_CODES.has(error.code)) {
      this.crash(error);
      return;
    }
    call.reject(error);
  }

  /**
   * Reserves the next delivery turn for this call's outcome, before the write that records it. An
   * outcome new to this execution waits until the replay has caught up with the history: every
   * recorded call made again and every recorded turn handed over. Why: the previous execution may
   * have gone on past its last recorded turn with outcomes nothing records (state reads and
   * writes), and recorded calls made in those turns must fall where they fell then.
   */
  protected async claim(call: Call, untimed?: StepRecord): Promise<number> {
    const now = this.claimNow(call);
    if (now !== undefined) return now;
    await new Promise<void>((resolve) => this.catchUpWaiters.push(untimed === undefined ? { resolve } : { resolve, untimed }));
    if (this.closed) throw SUSPEND;
    if (call.turn !== undefined) return call.turn;
    call.turn = this.turns.nextTurn();
    this.turns.expect(call.turn);
    return call.turn;
  }

  /**
   * `claim` when it need not wait (the call holds its turn, or the replay has caught up): the turn,
   * reserved the same way, without the promise and the hop an `await` costs. `undefined`: use
   * `claim`.
   */
  protected claimNow(call: Call): number | undefined {
    if (call.turn !== undefined) return call.turn;
    if (!this.caughtUp()) return undefined;
    call.turn = this.turns.nextTurn();
    this.turns.expect(call.turn);
    return call.turn;
  }

  /** Every recorded call was made again and every recorded turn handed over. */
  protected caughtUp(): boolean {
    return this.callIndex > this.maxRecordedSeq && this.turns.turn >= this.turns.maxRecorded;
  }

  /** Lets outcomes that waited for the replay to catch up take their turns. */
  protected releaseCaughtUp(): void {
    if (this.catchUpWaiters.length === 0 || !this.caughtUp()) return;
    for (const waiter of this.catchUpWaiters.splice(0)) waiter.resolve();
  }

  /**
   * The code is quiet, every recorded turn was handed over, and some of its calls wait to catch up
   * with recorded calls it has not made yet, among them outcomes the history holds finished
   * without a turn: a history written before turns were recorded (Cairn before 0.2.0), where each
   * outcome reached the code as it completed. The one that completed first goes to the code now,
   * in the next turn (which the history then records), as the build that wrote it did. Returns
   * false when no such outcome waits. Histories with turns never come here: their replay makes
   * every recorded call before it is quiet, unless the code changed.
   */
  private releaseUntimed(): boolean {
    let first = -1;
    for (let i = 0; i < this.catchUpWaiters.length; i++) {
      const step = this.catchUpWaiters[i]?.untimed;
      if (step === undefined) continue;
      const best = first === -1 ? undefined : this.catchUpWaiters[first]?.untimed;
      if (best === undefined || step.updatedAt < best.updatedAt || (step.updatedAt === best.updatedAt && step.seq < best.seq)) first = i;
    }
    if (first === -1) return false;
    const [waiter] = this.catchUpWaiters.splice(first, 1);
    this.untimedReleased = true;
    waiter?.resolve();
    return true;
  }

  /**
   * The replay left the recorded path: the execution fails with NON_DETERMINISM carrying
   * `divergence` (a check's replay ends with it as its verdict). Returns the error.
   */
  protected diverge(divergence: Omit<Divergence, 'runId' | 'turn' | 'expected' | 'actual'>, detail?: string): CairnError {
    const full: Divergence = {
      runId: this.run.id,
      turn: this.turns.turn,
      ...divergence,
      expected: divergence.recorded?.key ?? null,
      actual: divergence.called?.key ?? null,
    };
    if (full.location === undefined) delete full.location;
    if (this.untimedReleased) full.historyBeforeTurns = true;
    this.fatal ??= divergenceError(full, detail);
    if (this.checking) this.settle({ kind: 'checked', divergence: this.fatal.data as unknown as Divergence });
    return this.fatal;
  }

  /** The first recorded primary call this replay has not made (by position), if any. */
  protected firstUnmade(): StepRecord | undefined {
    for (let seq = this.callIndex; seq <= this.maxRecordedSeq; seq += 1) {
      const step = this.recordedBySeq.get(seq);
      if (step !== undefined && !this.calledKeys.has(step.key)) return step;
    }
    return undefined;
  }

  /**
   * An outcome nothing records (a state read or write): the code sees it in the turn after the
   * call, on every execution alike.
   */
  protected claimNext(call: Call): number {
    call.turn = this.turns.turn + 1;
    this.turns.expect(call.turn);
    return call.turn;
  }

  /** The code is quiet and no turn can start: suspend if every branch waits on the store. */
  protected quiet(): void {
    if (this.closed || this.finishing) return;
    if (this.inflight > 0) {
      // The next recorded turn waits for a call the code has not made, although the code is quiet
      // and, with other outcomes still to come, could only make it in a turn (a call from outside
      // any turn is refused then): this replay has left the recorded path. Fail instead of holding
      // the lease for ever.
      let missing = this.turns.awaitedNext().find((key) => !this.calledKeys.has(key));
      if (missing === undefined && this.catchUpWaiters.length > 0 && this.turns.turn >= this.turns.maxRecorded && !this.turns.hasOutcomesComing()) {
        // An outcome the history holds without a turn goes first (a history from before turns).
        if (this.releaseUntimed()) return;
        // New outcomes wait for recorded calls that the quiet code will not make.
        for (let seq = this.callIndex; seq <= this.maxRecordedSeq && missing === undefined; seq += 1) missing = this.recordedBySeq.get(seq)?.key;
      }
      if (missing === undefined) return;
      if (this.probeKey !== undefined && !this.checking) {
        this.settle({ kind: 'probe-miss' });
        return;
      }
      const step = this.recorded.get(missing);
      const error = this.diverge({ reason: 'missing-call', seq: step?.seq ?? null, recorded: recordedCall(step), called: null });
      this.settle({ kind: 'failed', error: toErrorRecord(error) });
      return;
    }
    // Nothing in flight and no branch waiting: the handler is awaiting its own async work
    // between primitives and will call the next one (or return) later. A probe must wait for
    // it like an execution does, not declare the queued step unreachable.
    if (!this.waiting) return;
    if (this.checking) {
      // Every branch waits for what is not recorded yet: compatible if every recorded call was made.
      const unmade = this.firstUnmade();
      if (unmade === undefined) this.settle({ kind: 'checked' });
      else this.diverge({ reason: 'missing-call', seq: unmade.seq, recorded: recordedCall(unmade), called: null });
      return;
    }
    if (this.probeKey !== undefined) {
      this.settle({ kind: 'probe-miss' });
      return;
    }
    const wakeAt = this.wakeTimes.length === 0 ? undefined : Math.min(...this.wakeTimes);
    this.settle({ kind: 'suspended', wakeAt, reasons: [...this.suspendReasons] });
  }

  /** Unwinds the current primitive: this branch waits until `wakeAt` (or for news, if undefined). */
  protected suspend(wakeAt: number | undefined, reason: SuspendReason): never {
    this.waiting = true;
    this.suspendReasons.add(reason);
    if (wakeAt !== undefined) this.wakeTimes.push(wakeAt);
    throw SUSPEND;
  }

  /** Assigns the call its key and position and checks them against what was recorded. */
  protected begin(kind: StepKind, name: string): Site {
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
      const called: DivergenceCall = { kind, key, name };
      throw this.diverge({ reason: 'different-call', seq, recorded: recordedCall(atSeq ?? recorded), called, location: callerLocation() });
    }
    this.calledKeys.add(key);
    // Runs after this call's own synchronous part: an outcome released now takes the next turn.
    if (this.catchUpWaiters.length > 0) queueMicrotask(() => this.releaseCaughtUp());
    return { kind, name, key, seq, recorded };
  }
}
