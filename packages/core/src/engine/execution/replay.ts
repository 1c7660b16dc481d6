// The replay of one execution (decision 55): the run's recorded history as the replay meets it,
// call positions and keys and their checks, delivery turns (decision 20), quiet detection and
// suspension, divergences, the fence and the only fenced step writes, recorded outcomes handed back
// in their turn, and how the execution ends (`settle`). Every part of an execution (task steps,
// waits, children, the saga) works through one Replay it is given; in check mode (`CHECK_PROBE_KEY`)
// the same object replays with no side effect and ends with a verdict (decision 54).
import { CairnError } from '../../errors/cairn-error.js';
import { fromErrorRecord } from '../../errors/error-record-codec.js';
import type { Json } from '../../model/json.js';
import type { RunRecord, RunTags } from '../../model/run.js';
import type { NewStep, StepKind, StepRecord, StepTransition } from '../../model/step.js';
import type { SuspendReason } from '../../observe/lifecycle-events.js';
import { toJsonRoundTrip } from '../../serialization/json-value.js';
import type { AnyWorkflowDefinition } from '../define/any-workflow-definition.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { type FaultPoint, NO_FAULTS } from '../fault-point.js';
import { TurnScheduler } from './turn-scheduler.js';
import { CHECK_PROBE_KEY, Call, type Delivery, NEVER, SUSPEND } from './call.js';
import { type Divergence, type DivergenceCall, callerLocation, divergenceError, recordedCall } from './divergence.js';
import { INFRA_CODES, type Outcome, type Site, cancelledError } from './outcome.js';
import { settleIfQuiet } from './replay-quiet.js';

/**
 * One execution's replay: everything the parts of an execution share. Writes only through `write`,
 * `insert` and `transition` (fenced), and none in probe or check mode.
 */
export class Replay {
  readonly recorded = new Map<string, StepRecord>();
  readonly recordedBySeq = new Map<number, StepRecord>();
  readonly occurrences = new Map<string, number>();
  readonly abort = new AbortController();
  /** Keys called in this execution (a recorded turn must not wait for a key never called). */
  readonly calledKeys = new Set<string>();
  /** The highest position the history recorded a call at (-1: none). */
  readonly maxRecordedSeq: number;
  /**
   * Outcomes waiting for the replay to catch up with the history (see `claim`); `untimed`: the
   * recorded step a waiter replays when it finished without a turn (see `releaseUntimed`).
   */
  readonly catchUpWaiters: { resolve: () => void; untimed?: StepRecord }[] = [];
  /** True once an outcome recorded without a turn was delivered in completion order (`releaseUntimed`). */
  untimedReleased = false;
  /** A pre-deploy check's replay (see `CHECK_PROBE_KEY`). */
  readonly checking: boolean;
  callIndex = 0;
  callNo = 0;
  inflight = 0;
  readonly turns: TurnScheduler<Call>;
  readonly wakeTimes: number[] = [];
  /** Why branches wait (reported with the suspension; see `SuspendReason`). */
  readonly suspendReasons = new Set<SuspendReason>();
  waiting = false;
  finishing = false;
  closed = false;
  cancelled: boolean;
  // Made on first use: most executions are never cancelled, and an error (its stack captured)
  // per execution was a visible share of a short run's CPU (issue 18).
  private cancelErrorMade: CairnError | undefined;
  /** What ends the run once `cancelled`: CANCELLED (with the cancel's reason) or DEADLINE_EXCEEDED. */
  get cancelError(): CairnError {
    this.cancelErrorMade ??= cancelledError(this.run.id, this.run.cancelReason);
    return this.cancelErrorMade;
  }
  set cancelError(error: CairnError) {
    this.cancelErrorMade = error;
  }
  fatal: CairnError | undefined;
  /** A pause was observed (`Execution.observePause`): no new primitive starts. */
  pausing = false;
  /**
   * The pause is a push's budget running out (`Execution.observeYield`), not a pause of the run:
   * the execution ends due at once (reason `budget`) instead of waiting for a resume.
   */
  yielding = false;
  /** Inline step bodies running now, each until its outcome is recorded: a pause lets them finish. */
  private bodiesRunning = 0;
  // Aborts compensation bodies when the execution ends (`abort` fires at cancellation already);
  // made when a saga first needs it: most executions run none.
  private sagaAbort: AbortController | undefined;
  settleOutcome: ((outcome: Outcome) => void) | undefined;
  /**
   * The trace context this execution continues in: the run's, or what a lifecycle subscriber set
   * as `executionTraceContext` (its execution span). Runs this execution starts and the queued
   * steps it dispatches carry it, so they join its trace under it.
   */
  traceContext: Record<string, string> | undefined;

  /**
   * The calls waiting when this execution suspended, each able to pick up where it stopped
   * (`Call.resume`); `resumable` stays true while every one of them could. See `reopen`.
   */
  readonly suspendedCalls: Call[] = [];
  resumable = true;
  /** The run's tags as they stand after this execution's `ctx.setTags` calls (a successor takes them). */
  tags: RunTags | undefined;

  constructor(
    readonly rt: EngineRuntime,
    /** The run as this execution's claim returned it (a kept execution's next claim replaces it: `reopen`). */
    public run: RunRecord,
    steps: readonly StepRecord[],
    readonly def: AnyWorkflowDefinition,
    readonly probeKey?: string,
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
    this.tags = run.tags;
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
    let lastFence = 0;
    for (const step of steps) if (step.fence !== undefined && step.fence > lastFence) lastFence = step.fence;
    this.lastInsertFence = lastFence;
    this.leaseHeldUntil = run.lease?.expiresAt ?? rt.clock.now() + rt.timings.leaseMs;
  }

  /** Abandons the execution with no further write (lease lost, store down, simulated crash). */
  crash(error: unknown): void {
    this.settle({ kind: 'crashed', error });
  }

  settle(outcome: Outcome): void {
    if (this.closed) return;
    this.closed = true;
    this.turns.stop();
    // A suspended execution may be kept and resumed (`reopen`): its code's signal aborts only when
    // it is dropped (`discard`).
    if (outcome.kind !== 'suspended') this.discard();
    this.settleOutcome?.(outcome);
  }

  /** Ends a closed execution for good: its code's signal and its saga's abort. */
  discard(): void {
    if (!this.abort.signal.aborted) this.abort.abort(new CairnError('ENGINE_STOPPED', 'execution ended'));
    if (this.sagaAbort !== undefined && !this.sagaAbort.signal.aborted) this.sagaAbort.abort(new CairnError('ENGINE_STOPPED', 'execution ended'));
  }

  /**
   * True when this execution, suspended, can be resumed by `reopen` instead of replayed: every
   * waiting call can pick up where it stopped, and no patch marker write is still on its way. Never
   * once the handler ended (a saga waiting for a compensation's retry), the run is being
   * cancelled, or a pause ended it: those go on through a replay.
   */
  keepable(): boolean {
    return (
      this.closed &&
      this.waiting &&
      this.resumable &&
      !this.finishing &&
      !this.cancelled &&
      // A pause ends the execution with calls cut short that only a replay makes again.
      !this.pausing &&
      this.caughtUp() &&
      this.suspendedCalls.length > 0 &&
      this.markersUnwritten === 0 &&
      this.fatal === undefined
    );
  }

  /**
   * Resumes a suspended execution under a new claim of its run (`run`, the next fence after the one
   * it suspended under, so nothing but this execution wrote the run's steps meanwhile): every
   * waiting call runs its wait again from its latest record, as a replay reaching that point would,
   * and the execution goes on from there without replaying its history.
   */
  reopen(run: RunRecord): void {
    this.run = run;
    this.closed = false;
    this.waiting = false;
    this.wakeTimes.length = 0;
    this.suspendReasons.clear();
    this.traceContext = run.traceContext;
    this.leaseHeldUntil = run.lease?.expiresAt ?? this.rt.clock.now() + this.rt.timings.leaseMs;
    this.turns.restart();
    const calls = this.suspendedCalls.splice(0);
    for (const call of calls) {
      const resume = call.resume as () => Promise<Delivery>;
      call.resume = undefined;
      call.turn = undefined;
      call.delivery = undefined;
      this.inflight++;
      let promise: Promise<Delivery>;
      try {
        promise = resume();
      } catch (error) {
        promise = Promise.reject(error);
      }
      const { map } = call;
      if (map !== undefined) promise = promise.then(map);
      promise.then(
        (delivery) => this.outcomeReady(call, delivery),
        (error: unknown) => this.outcomeFailed(call, error),
      );
    }
  }

  /**
   * An inline step body starts: returns the function to call once its outcome is recorded (or it
   * ended without one). Calling it twice counts once.
   */
  bodyStarted(): () => void {
    this.bodiesRunning++;
    let running = true;
    return () => {
      if (!running) return;
      running = false;
      this.bodiesRunning--;
      this.pauseIfIdle();
    };
  }

  /**
   * Paused and no step body running: the execution ends suspended (reason `paused`, no wake-up
   * time) unless it is ending already. Whatever it did not record is made again by the replay after
   * `resume`, as after a crash at this point.
   */
  pauseIfIdle(): void {
    if (!this.pausing || this.bodiesRunning > 0 || this.closed || this.finishing) return;
    if (this.yielding) this.settle({ kind: 'suspended', wakeAt: this.rt.clock.now(), reasons: ['budget'] });
    else this.settle({ kind: 'suspended', wakeAt: undefined, reasons: ['paused'] });
  }

  /** The signal of compensation bodies and saga waits: aborted when the execution ends. */
  get sagaSignal(): AbortSignal {
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
  guard<T>(body: (call: Call) => Promise<Delivery>): Promise<T> {
    if (this.closed) return NEVER;
    if (this.fatal) return Promise.reject(this.fatal);
    if (this.cancelled) return Promise.reject(this.cancelError);
    // Paused: the call never starts; the execution ends once its running bodies are recorded.
    if (this.pausing) return NEVER;
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
    if (error === SUSPEND && !this.closed) {
      if (call.resume === undefined) this.resumable = false;
      else this.suspendedCalls.push(call);
    }
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
  async claim(call: Call, untimed?: StepRecord): Promise<number> {
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
  claimNow(call: Call): number | undefined {
    if (call.turn !== undefined) return call.turn;
    if (!this.caughtUp()) return undefined;
    call.turn = this.turns.nextTurn();
    this.turns.expect(call.turn);
    return call.turn;
  }

  /** Every recorded call was made again and every recorded turn handed over. */
  caughtUp(): boolean {
    return this.callIndex > this.maxRecordedSeq && this.turns.turn >= this.turns.maxRecorded;
  }

  /** Lets outcomes that waited for the replay to catch up take their turns. */
  releaseCaughtUp(): void {
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
  releaseUntimed(): boolean {
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
  diverge(divergence: Omit<Divergence, 'runId' | 'turn' | 'expected' | 'actual'>, detail?: string): CairnError {
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
  firstUnmade(): StepRecord | undefined {
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
  claimNext(call: Call): number {
    call.turn = this.turns.turn + 1;
    this.turns.expect(call.turn);
    return call.turn;
  }

  /** The code is quiet and no turn can start: suspend if every branch waits on the store (replay-quiet.ts). */
  quiet(): void {
    settleIfQuiet(this);
  }

  /** Unwinds the current primitive: this branch waits until `wakeAt` (or for news, if undefined). */
  suspend(wakeAt: number | undefined, reason: SuspendReason): never {
    this.waiting = true;
    this.suspendReasons.add(reason);
    if (wakeAt !== undefined) this.wakeTimes.push(wakeAt);
    throw SUSPEND;
  }

  /** Assigns the call its key and position and checks them against what was recorded. */
  begin(kind: StepKind, name: string): Site {
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
  } /**
   * The highest `StepRecord.fence` of the run: the claim whose execution last recorded a step (0
   * when none carries one). Set to this execution's fence by its first step insert.
   */
  lastInsertFence: number;
  /**
   * Until when this execution's lease holds, as its last claim or renewal gave it (kept up by the
   * lease renewal). Past it, a step's body does not run before a fenced write says the lease is
   * still ours.
   */
  leaseHeldUntil: number;

  fault(point: FaultPoint, stepKey?: string): void {
    if (this.rt.faults === NO_FAULTS) return;
    try {
      this.rt.faults.hit(stepKey === undefined ? { point, runId: this.run.id } : { point, runId: this.run.id, stepKey });
    } catch (error) {
      this.crash(error);
      throw SUSPEND;
    }
  }

  /**
   * The write of a patch marker (`ctx.patched` answers at once): every later write waits for it,
   * so no later record can be durable without the marker before it.
   */
  markerWrite: Promise<void> | undefined;
  /** Patch markers this execution answered whose write has not completed (such an execution is not kept: `keepable`). */
  markersUnwritten = 0;

  /** Every store write of this execution goes through here: fenced, and refused once ended. */
  async write<T>(op: (fence: number, now: number) => Promise<T>): Promise<T> {
    if (this.markerWrite !== undefined) await this.markerWrite;
    if (this.closed) throw SUSPEND;
    const result = await op(this.run.fence, this.rt.clock.now());
    if (this.closed) throw SUSPEND;
    return result;
  }

  /** Records a step (`steps.insert`) through `write`'s rules, written out: it is on every step's path. */
  async insert(site: Site, step: Omit<NewStep, 'key' | 'name' | 'kind' | 'seq'>): Promise<StepRecord> {
    if (this.markerWrite !== undefined) await this.markerWrite;
    if (this.closed) throw SUSPEND;
    const fence = this.run.fence;
    const now = this.rt.clock.now();
    const full: NewStep = { key: site.key, name: site.name, kind: site.kind, seq: site.seq, ...step };
    const { step: written, created } = await this.rt.store.steps.insert(this.run.id, fence, full, now);
    if (created) this.lastInsertFence = fence;
    if (this.closed) throw SUSPEND;
    return written;
  }

  /**
   * Claims of the run since it last recorded a step, this one included: 1 while executions make
   * progress; more when earlier claims ended without recording anything (a crash, typically a step
   * body that killed its process before its result was written).
   */
  claimsWithoutProgress(): number {
    return this.run.fence - this.lastInsertFence;
  }

  /** Moves a recorded step on (`steps.transition`) through `write`'s rules, written out as `insert` is. */
  async transition(transition: StepTransition): Promise<StepRecord> {
    if (this.markerWrite !== undefined) await this.markerWrite;
    if (this.closed) throw SUSPEND;
    const written = await this.rt.store.steps.transition(this.run.id, this.run.fence, transition, this.rt.clock.now());
    if (this.closed) throw SUSPEND;
    return written;
  }

  payload(value: unknown, what: string): Json {
    return toJsonRoundTrip(value, { what, maxBytes: this.rt.maxPayloadBytes }).value;
  }

  /**
   * A step the history holds as finished: its outcome goes to the code in its recorded turn. A
   * step finished without a turn (by a queued step worker, or before turns were recorded) is
   * given one first, so every later execution delivers it at the same point.
   */
  async finished(
    call: Call,
    site: Site,
    step: StepRecord,
    outcome: () => Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }>,
  ): Promise<Delivery> {
    if (step.turn !== undefined) return { turn: step.turn, key: site.key, ...(await outcome()) };
    // A probe (a queued step's worker, a saga, a check) gives it the turn an execution would, without
    // writing it: in a history from before turns every outcome is such, and the calls that follow it
    // (the queued step a worker looks for) are made only after it.
    const turn = await this.claim(call, step);
    if (this.probeKey === undefined)
      await this.transition({ key: site.key, from: { status: [step.status], attempt: step.attempt }, to: { status: step.status, turn } });
    return { turn, ...(await outcome()) };
  }

  stepFailed(site: Site, error: Error): CairnError {
    return new CairnError('STEP_FAILED', `Step ${JSON.stringify(site.key)} failed: ${error.message}`, {
      cause: error,
      data: { runId: this.run.id, key: site.key },
    });
  }

  /** Probe mode: serve what is recorded (in its turn), wait on everything else. */
  async replayOnly(call: Call, site: Site): Promise<Delivery> {
    const step = site.recorded;
    if (step === undefined || (step.status !== 'succeeded' && step.status !== 'failed')) this.suspend(undefined, 'recheck');
    if (step.status === 'succeeded') return this.finished(call, site, step, async () => ({ ok: true, value: step.output }));
    if (step.status === 'failed') {
      const error = fromErrorRecord(step.error ?? { name: 'Error', message: 'failed' });
      return this.finished(call, site, step, async () => ({ ok: false, error: step.kind === 'task' ? this.stepFailed(site, error) : error }));
    }
    this.suspend(undefined, 'recheck');
  }
}
