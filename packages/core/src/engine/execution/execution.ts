// One execution of a run, as the engine sees it: start the handler, observe a cancel, end with an
// outcome (completed, failed after the saga, cancelled, suspended). Composes the parts of an
// execution (decision 55): the Replay (history, turns, positions, fenced writes), task steps,
// waits, child calls and the saga, each given what it needs; `ctx` is wired here, each method to
// its part.
import { CairnError } from '../../errors/cairn-error.js';
import { toErrorRecord } from '../../errors/error-record-codec.js';
import type { Json } from '../../model/json.js';
import type { RunRecord } from '../../model/run.js';
import type { StepRecord } from '../../model/step.js';
import { toJsonRoundTrip } from '../../serialization/json-value.js';
import type { AnyWorkflowDefinition } from '../define/any-workflow-definition.js';
import { checkOptions } from '../check-input.js';
import { checkWakeTime, toMilliseconds } from '../define/duration.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { uuidv4 } from '../uuid.js';
import type { ChildOptions, StartChildOptions, WaitForEventOptions, WorkflowContext } from '../define/workflow-context.js';
import { ChildCalls } from './child-calls.js';
import { type Compensation, SAGA_PROBE_KEY } from './compensation.js';
import { type Divergence, recordedCall } from './divergence.js';
import { type Outcome, cancelledError } from './outcome.js';
import { Replay } from './replay.js';
import { Saga } from './saga.js';
import { RequestCalls } from './request-calls.js';
import { StreamWrites } from './stream-writes.js';
import { TagWrites } from './tag-writes.js';
import { TaskSteps } from './task-steps.js';
import { Waits } from './waits.js';

export type { Outcome } from './outcome.js';

/**
 * One replay of a run: runs the handler from the top, serving recorded steps from the snapshot read
 * at the start, executing the first unrecorded ones, and ending as completed, failed, cancelled or
 * suspended (every branch waiting). In probe mode it only replays until it finds the body of the
 * step `probeKey` (for queued step workers) and never writes.
 */
export class Execution {
  /** The replay every part works through (decision 55). */
  private readonly r: Replay;
  private readonly tasks: TaskSteps;
  private readonly saga: Saga;
  private readonly kids: ChildCalls;
  private readonly waits: Waits;
  private readonly streams: StreamWrites;
  private readonly tagWrites: TagWrites;
  private readonly requests: RequestCalls;

  constructor(rt: EngineRuntime, run: RunRecord, steps: readonly StepRecord[], def: AnyWorkflowDefinition, probeKey?: string) {
    this.r = new Replay(rt, run, steps, def, probeKey);
    this.tasks = new TaskSteps(this.r);
    this.saga = new Saga(this.r, this.tasks);
    this.kids = new ChildCalls(this.r);
    this.waits = new Waits(this.r, this.kids);
    this.streams = new StreamWrites(this.r);
    this.tagWrites = new TagWrites(this.r);
    this.requests = new RequestCalls(this.r, this.waits);
  }

  /** Abandons the execution with no further write (lease lost, store down, simulated crash). */
  crash(error: unknown): void {
    this.r.crash(error);
  }

  /** Until when this execution's lease holds (see `Replay.leaseHeldUntil`); kept up by the lease renewal. */
  get leaseHeldUntil(): number {
    return this.r.leaseHeldUntil;
  }

  set leaseHeldUntil(until: number) {
    this.r.leaseHeldUntil = until;
  }

  /** The trace context this execution continues in (see `Replay.traceContext`). */
  get traceContext(): Record<string, string> | undefined {
    return this.r.traceContext;
  }

  set traceContext(context: Record<string, string> | undefined) {
    this.r.traceContext = context;
  }

  /** The `compensate` closures of the steps this execution called (a saga probe collects them). */
  get compensations(): ReadonlyMap<string, Compensation> {
    return this.tasks.compensations;
  }

  /**
   * True when this execution suspended in a state `resume` can pick up (see `Replay.keepable`):
   * it may then be kept (`StickyExecutions`) instead of replayed on the next wake.
   */
  keepable(): boolean {
    return this.r.keepable();
  }

  /** Calls this execution made (recorded ones included): its share of a kept-executions budget. */
  get calls(): number {
    return this.r.callIndex;
  }

  /** The fence of the claim this execution last ran under. */
  get fence(): number {
    return this.r.run.fence;
  }

  /** Drops a suspended execution for good (it will not be resumed): its code's signal aborts. */
  discard(): void {
    this.r.discard();
  }

  /**
   * Resumes a kept execution under `run`, the next claim of its run (fence one above the one it
   * suspended under), and resolves with how it ended this time, as `start` does.
   */
  resume(run: RunRecord): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      this.r.settleOutcome = resolve;
      this.r.reopen(run);
    });
  }

  /** Runs the handler and resolves with how this execution ended. */
  start(): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      this.r.settleOutcome = resolve;
      if (this.r.cancelled) {
        this.r.finishing = true;
        void this.finishCancelled();
        return;
      }
      const ctx = this.context();
      Promise.resolve()
        .then(() => this.r.def.handler(ctx, this.r.run.input))
        .then(
          (output) => this.finish({ ok: true, output }),
          (error) => this.finish({ ok: false, error }),
        );
      this.r.turns.begin();
    });
  }

  /**
   * Cancellation was requested (or the deadline passed) while this execution runs: `error` (default
   * CANCELLED with the reason the run was claimed with) becomes `signal.reason` of `ctx.signal` and
   * of every running inline body, and every later primitive throws it. The first call wins. A
   * DEADLINE_EXCEEDED error ends the run `failed` with it; anything else ends it `cancelled`.
   */
  observeCancel(error?: CairnError): void {
    if (this.r.cancelled || this.r.probeKey !== undefined) return;
    this.r.cancelled = true;
    if (error) this.r.cancelError = error;
    this.r.abort.abort(this.r.cancelError);
  }

  /**
   * The run was paused while this execution runs: no new primitive starts (each call waits for
   * ever, as a suspended branch does), the step bodies running now finish and are recorded, and then
   * the execution ends `suspended` (reason `paused`) without a wake-up time, giving the lease back.
   * A replay after `resume` continues exactly there. An execution already ending (its handler
   * returned or threw, or a cancel is being carried out) ends as it would have.
   */
  observePause(): void {
    if (this.r.probeKey !== undefined || (this.r.pausing && !this.r.yielding)) return;
    // A pause observed while a budget stop is under way wins: the run waits for its resume.
    this.r.yielding = false;
    this.r.pausing = true;
    this.r.pauseIfIdle();
  }

  /**
   * The push this execution runs in is near its time budget (`engine.pushed.executeOnce`): it
   * stops as for a pause — no new primitive starts, the step bodies running now finish and are
   * recorded — and ends `suspended` (reason `budget`) due at once, so the next push replays it from
   * there. An execution already ending, or paused, ends as it would have.
   */
  observeYield(): void {
    if (this.r.probeKey !== undefined || this.r.pausing) return;
    this.r.yielding = true;
    this.r.pausing = true;
    this.r.pauseIfIdle();
  }

  private async finish(result: { ok: true; output: unknown } | { ok: false; error: unknown }): Promise<void> {
    if (this.r.closed) return;
    this.r.finishing = true;
    // A patch marker still being written is part of the history this outcome ends.
    if (this.r.markerWrite !== undefined) await this.r.markerWrite;
    if (this.r.closed) return;
    if (this.r.checking) return this.checked();
    if (this.r.probeKey !== undefined) return this.r.settle({ kind: 'probe-miss' });
    if (this.r.fatal) return this.r.settle({ kind: 'failed', error: toErrorRecord(this.r.fatal) });
    if (this.r.cancelled) return this.finishCancelled();
    // A deterministic replay makes at least every call the history recorded (positions 0..n-1). A
    // handler that ends before reaching a recorded step runs changed code: its result is not one
    // this history can produce.
    const unreached = this.r.firstUnmade();
    if (unreached) {
      const error = this.r.diverge({ reason: 'ended-early', seq: unreached.seq, recorded: recordedCall(unreached), called: null });
      return this.r.settle({ kind: 'failed', error: toErrorRecord(error) });
    }
    // A failed run is undone: every call was made in this execution, so every compensation
    // closure is known (a NON_DETERMINISM failure above is not: the code does not match its history).
    if (!result.ok) return this.saga.failAfterSaga(toErrorRecord(result.error), this.tasks.compensations);
    if (result.output === undefined) return this.r.settle({ kind: 'completed', output: undefined });
    let value: Json;
    try {
      value = toJsonRoundTrip(result.output, { what: `output of workflow ${this.r.def.name}`, maxBytes: this.r.rt.maxPayloadBytes }).value;
    } catch (error) {
      return this.saga.failAfterSaga(toErrorRecord(error), this.tasks.compensations);
    }
    this.r.settle({ kind: 'completed', output: value });
  }

  /** A check's replay reached the handler's end: compatible when it made every recorded call. */
  private checked(): void {
    if (this.r.closed) return;
    const unreached = this.r.firstUnmade();
    if (unreached) {
      this.r.diverge({ reason: 'ended-early', seq: unreached.seq, recorded: recordedCall(unreached), called: null });
      return;
    }
    this.r.settle(this.r.fatal ? { kind: 'checked', divergence: this.r.fatal.data as unknown as Divergence } : { kind: 'checked' });
  }

  private async finishCancelled(): Promise<void> {
    // Propagate to every child this run started that may still be running. Detached children
    // (ctx.startChild: recorded `succeeded` at once, never in `children`) are left running.
    for (const step of this.r.recorded.values()) {
      if (step.kind === 'child' && step.status === 'waiting' && step.childRunId) this.kids.children.add(step.childRunId);
    }
    // Children are cancelled with the parent's reason; a parent past its deadline says so.
    const deadline = CairnError.is(this.r.cancelError, 'DEADLINE_EXCEEDED');
    const reason = deadline ? `parent run ${this.r.run.id} passed its deadline` : (this.r.cancelError.data as { reason?: string } | undefined)?.reason;
    try {
      for (const childId of this.kids.children) {
        const child = await this.r.rt.store.runs.requestCancel(childId, this.r.rt.clock.now(), ...(reason === undefined ? [] : [reason]));
        // A child executing in this process learns of it now, as with `engine.cancel`, instead of
        // at its next lease renewal (by which time a short child has run to completion).
        if (child) this.r.rt.executing.get(child.id)?.observeCancel(cancelledError(child.id, child.cancelReason));
        if (child) await this.r.rt.dispatchRun(child);
      }
    } catch (error) {
      return this.r.settle({ kind: 'crashed', error });
    }
    // Compensation closures exist only for calls made in an execution, and this one may have made
    // none (cancelled before the replay) or only some (cancelled mid-replay): then a probe replays
    // the handler over the history, writing nothing, and collects every step's closure.
    let compensations: ReadonlyMap<string, Compensation> = this.tasks.compensations;
    const missed = [...this.r.recorded.values()].some((step) => step.kind === 'task' && !step.key.endsWith(':compensate') && !this.r.calledKeys.has(step.key));
    if (missed) {
      try {
        const steps = await this.r.rt.store.steps.load(this.r.run.id);
        if (this.r.closed) return;
        const probe = new Execution(this.r.rt, this.r.run, steps, this.r.def, SAGA_PROBE_KEY);
        await probe.start();
        compensations = probe.compensations;
      } catch (error) {
        return this.r.settle({ kind: 'crashed', error });
      }
    }
    const runError = await this.saga.saga(toErrorRecord(this.r.cancelError), compensations);
    if (runError !== undefined) this.r.settle({ kind: deadline ? 'failed' : 'cancelled', error: runError });
  }

  private context(): WorkflowContext {
    return {
      runId: this.r.run.id,
      workflow: this.r.run.workflow,
      version: this.r.run.version,
      signal: this.r.abort.signal,
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      step: (name, fn, options) => this.r.guard((call) => this.tasks.taskStep(call, name, fn, options ?? {})) as Promise<any>,
      sleep: (name, duration) =>
        this.r.guard((call) => {
          const ms = toMilliseconds(duration, `sleep ${JSON.stringify(name)}`);
          return this.waits.sleepStep(call, name, this.r.rt.clock.now() + ms);
        }),
      sleepUntil: (name, until) =>
        this.r.guard((call) => this.waits.sleepStep(call, name, checkWakeTime(until, this.r.rt.clock.now(), `sleepUntil ${JSON.stringify(name)}`))),
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      waitForEvent: (event: unknown, options?: WaitForEventOptions) => this.r.guard((call) => this.waits.eventStep(call, event, options ?? {})) as Promise<any>,
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      child: (workflow, input, options) => this.r.guard((call) => this.kids.childStep(call, workflow, input, options ?? {})) as Promise<any>,
      childOutcome: (workflow, input, options) =>
        this.r.guard(async (call) => {
          const checked = checkOptions('ctx.childOutcome options', options, ['name']) as ChildOptions;
          // A resumed wait (`Call.resume`) hands its outcome over as a value too.
          call.map = (delivery) => this.kids.asChildOutcome(delivery);
          return call.map(await this.kids.childStep(call, workflow, input, checked, 'ctx.childOutcome'));
          // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
        }) as Promise<any>,
      startChild: (workflow, input, options) =>
        this.r.guard((call) =>
          this.kids.startChildStep(call, workflow, input, checkOptions('ctx.startChild options', options, ['name']) as StartChildOptions),
        ) as Promise<string>,
      setState: (key, value) => this.r.guard((call) => this.waits.setState(call, key, value)),
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      state: (key) => this.r.guard((call) => this.waits.readState(call, key)) as Promise<any>,
      emit: (stream, chunk) => this.r.guard((call) => this.streams.emit(call, stream, chunk)),
      closeStream: (stream) => this.r.guard((call) => this.streams.close(call, stream)),
      setTags: (tags) => this.r.guard((call) => this.tagWrites.setTags(call, tags)),
      stream: (name) => ({
        name,
        write: (chunk) => this.r.guard((call) => this.streams.emit(call, name, chunk)),
        close: () => this.r.guard((call) => this.streams.close(call, name)),
      }),
      expose: (name, value) => this.r.guard((call) => this.streams.expose(call, name, value)),
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its payload and reply types, which only the caller's definition knows
      receiveRequest: (request: unknown) => this.requests.receive(request) as Promise<any>,
      now: () => this.r.guard((call) => this.waits.recordedValue(call, 'now', () => this.r.rt.clock.now())) as Promise<number>,
      random: () => this.r.guard((call) => this.waits.recordedValue(call, 'random', () => Math.random())) as Promise<number>,
      uuid: () => this.r.guard((call) => this.waits.recordedValue(call, 'uuid', () => uuidv4())) as Promise<string>,
      continueAsNew: (input) => this.r.guard((call) => this.kids.continueAsNew(call, input)) as Promise<never>,
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      select: (name, alternatives) => this.r.guard((call) => this.waits.selectStep(call, name, alternatives)) as Promise<any>,
      patched: (id) => this.waits.patched(id),
      deprecatePatch: (id) => this.waits.deprecatePatch(id),
    };
  }
}
