// One execution of a run, as the engine sees it: start the handler, observe a cancel, end with an
// outcome (completed, failed after the saga, cancelled, suspended). The workflow context `ctx`
// is wired here, each method to its primitive in the layers below: execution-calls (each call's
// key and turn), execution-records (fenced writes, the lease, recorded outcomes), execution-tasks
// (`ctx.step`), execution-saga, execution-children, execution-primitives (decision 44).
import { CairnError } from '../errors/cairn-error.js';
import { toErrorRecord } from '../errors/error-record-codec.js';
import type { Json } from '../model/json.js';
import { toJsonRoundTrip } from '../serialization/json-value.js';
import { checkWakeTime, toMilliseconds } from './duration.js';
import { uuidv4 } from './uuid.js';
import type { StepRecord } from '../model/step.js';
import { type Divergence, recordedCall } from './divergence.js';
import { cancelledError, type Outcome } from './execution-outcome.js';
import { checkOptions } from './check-input.js';
import { type Compensation, SAGA_PROBE_KEY } from './compensation.js';
import type { ChildOptions, StartChildOptions, WaitForEventOptions, WorkflowContext } from './workflow-context.js';
import { ExecutionPrimitives } from './execution-primitives.js';

export type { Outcome } from './execution-outcome.js';

/**
 * One replay of a run: runs the handler from the top, serving recorded steps from the snapshot read
 * at the start, executing the first unrecorded ones, and ending as completed, failed, cancelled or
 * suspended (every branch waiting). In probe mode it only replays until it finds the body of the
 * step `probeKey` (for queued step workers) and never writes.
 */
export class Execution extends ExecutionPrimitives {
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

  private async finish(result: { ok: true; output: unknown } | { ok: false; error: unknown }): Promise<void> {
    if (this.closed) return;
    this.finishing = true;
    // A patch marker still being written is part of the history this outcome ends.
    if (this.markerWrite !== undefined) await this.markerWrite;
    if (this.closed) return;
    if (this.checking) return this.checked();
    if (this.probeKey !== undefined) return this.settle({ kind: 'probe-miss' });
    if (this.fatal) return this.settle({ kind: 'failed', error: toErrorRecord(this.fatal) });
    if (this.cancelled) return this.finishCancelled();
    // A deterministic replay makes at least every call the history recorded (positions 0..n-1). A
    // handler that ends before reaching a recorded step runs changed code: its result is not one
    // this history can produce.
    const unreached = this.firstUnreached();
    if (unreached) {
      const error = this.diverge({ reason: 'ended-early', seq: unreached.seq, recorded: recordedCall(unreached), called: null });
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

  /** The recorded primary call of lowest position that this replay never reached, if any. */
  private firstUnreached(): StepRecord | undefined {
    let first: StepRecord | undefined;
    for (const step of this.recordedBySeq.values()) if (step.seq >= this.callIndex && (first === undefined || step.seq < first.seq)) first = step;
    return first;
  }

  /** A check's replay reached the handler's end: compatible when it made every recorded call. */
  private checked(): void {
    if (this.closed) return;
    const unreached = this.firstUnreached();
    if (unreached) {
      this.diverge({ reason: 'ended-early', seq: unreached.seq, recorded: recordedCall(unreached), called: null });
      return;
    }
    this.settle(this.fatal ? { kind: 'checked', divergence: this.fatal.data as unknown as Divergence } : { kind: 'checked' });
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
        if (child) await this.rt.dispatchRun(child);
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

  private context(): WorkflowContext {
    return {
      runId: this.run.id,
      workflow: this.run.workflow,
      version: this.run.version,
      signal: this.abort.signal,
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      step: (name, fn, options) => this.guard((call) => this.taskStep(call, name, fn, options ?? {})) as Promise<any>,
      sleep: (name, duration) =>
        this.guard((call) => {
          const ms = toMilliseconds(duration, `sleep ${JSON.stringify(name)}`);
          return this.sleepStep(call, name, this.rt.clock.now() + ms);
        }),
      sleepUntil: (name, until) =>
        this.guard((call) => this.sleepStep(call, name, checkWakeTime(until, this.rt.clock.now(), `sleepUntil ${JSON.stringify(name)}`))),
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      waitForEvent: (event: unknown, options?: WaitForEventOptions) => this.guard((call) => this.eventStep(call, event, options ?? {})) as Promise<any>,
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      child: (workflow, input, options) => this.guard((call) => this.childStep(call, workflow, input, options ?? {})) as Promise<any>,
      childOutcome: (workflow, input, options) =>
        this.guard(async (call) => {
          const checked = checkOptions('ctx.childOutcome options', options, ['name']) as ChildOptions;
          return this.asChildOutcome(await this.childStep(call, workflow, input, checked, 'ctx.childOutcome'));
          // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
        }) as Promise<any>,
      startChild: (workflow, input, options) =>
        this.guard((call) =>
          this.startChildStep(call, workflow, input, checkOptions('ctx.startChild options', options, ['name']) as StartChildOptions),
        ) as Promise<string>,
      setState: (key, value) => this.guard((call) => this.setState(call, key, value)),
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      state: (key) => this.guard((call) => this.readState(call, key)) as Promise<any>,
      now: () => this.guard((call) => this.recordedValue(call, 'now', () => this.rt.clock.now())) as Promise<number>,
      random: () => this.guard((call) => this.recordedValue(call, 'random', () => Math.random())) as Promise<number>,
      uuid: () => this.guard((call) => this.recordedValue(call, 'uuid', () => uuidv4())) as Promise<string>,
      continueAsNew: (input) => this.guard((call) => this.continueAsNew(call, input)) as Promise<never>,
      // biome-ignore lint/suspicious/noExplicitAny: the context method is generic in its result type, which only the caller's step function knows; the guarded call returns that value unchanged
      select: (name, alternatives) => this.guard((call) => this.selectStep(call, name, alternatives)) as Promise<any>,
      patched: (id) => this.patched(id),
      deprecatePatch: (id) => this.deprecatePatch(id),
    };
  }
}
