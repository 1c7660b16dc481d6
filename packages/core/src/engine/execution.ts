import { flowKeys } from './flow-keys.js';
import { CairnError } from '../errors/cairn-error.js';
import { fromErrorRecord, toErrorRecord } from '../errors/error-record-codec.js';
import type { Json } from '../model/json.js';
import type { RunRecord } from '../model/run.js';
import type { NewStep, StepRecord } from '../model/step.js';
import { toJsonRoundTrip } from '../serialization/json-value.js';
import type { AnyWorkflowDefinition } from './any-workflow-definition.js';
import { checkWakeTime, toMilliseconds } from './duration.js';
import { uuidv4, uuidv7 } from './uuid.js';
import { cancelledError, type Outcome } from './execution-outcome.js';
import { checkIdentifier, checkOptions, IDENTIFIER_LIMITS } from './check-input.js';
import { checkEventName, eventNameOf } from './event-definition.js';
import { CONTINUED_AS, continuedAs } from './continued-as.js';
import { checkAlternatives, type CheckedAlternative } from './select-alternatives.js';
import { childStart } from './run-deadline.js';
import { type Compensation, SAGA_PROBE_KEY } from './compensation.js';
import type { ChildOptions, StartChildOptions, WaitForEventOptions, WorkflowContext } from './workflow-context.js';
import { childOutcomeOf } from './child-outcome.js';
import { type Call, type Delivery, SUSPEND } from './execution-core.js';
import { ExecutionSteps } from './execution-steps.js';

export type { Outcome } from './execution-outcome.js';

/**
 * One replay of a run: runs the handler from the top, serving recorded steps from the snapshot read
 * at the start, executing the first unrecorded ones, and ending as completed, failed, cancelled or
 * suspended (every branch waiting). In probe mode it only replays until it finds the body of the
 * step `probeKey` (for queued step workers) and never writes.
 */
export class Execution extends ExecutionSteps {
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
    };
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
    if ((step.wakeAt ?? 0) > now) this.suspend(step.wakeAt, 'sleep');
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
      const error = new CairnError('EVENT_TIMEOUT', `No event ${JSON.stringify(eventName)} arrived before the timeout`, {
        data: { runId: this.run.id, event: eventName },
      });
      const turn = await this.claim(call);
      await this.transition({ key: site.key, from, to: { status: 'failed', error: toErrorRecord(error), turn } });
      return { turn, ok: false, error, onDeliver: release };
    }
    this.suspend(step.wakeAt, 'event');
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
  private async childStep(call: Call, workflow: AnyWorkflowDefinition | string, input: unknown, options: ChildOptions, what = 'ctx.child'): Promise<Delivery> {
    const childName = typeof workflow === 'string' ? workflow : workflow?.name;
    this.rt.registry.forStart(childName); // an unknown workflow is refused at the call, before anything is recorded
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
      // Idempotent across a crash before the step is recorded.
      const { run: child } = await this.createRun(childName, childInput, `$child:${this.run.id}:${site.key}`, {
        parent: { runId: this.run.id, stepKey: site.key },
        deadline: 'inherit',
      });
      this.fault('before-checkpoint', site.key);
      step = await this.insert(site, { status: 'waiting', maxAttempts: 1, childRunId: child.id });
      this.fault('after-checkpoint', site.key);
      this.children.add(child.id);
      await this.rt.dispatchRun(child);
      this.suspend(this.rt.clock.now() + childBackstopMs, 'child');
    }
    const childId = step.childRunId as string;
    const child = await this.lastOfChain(childId);
    const from = { status: ['waiting' as const], attempt: step.attempt };
    if (child?.status === 'completed') {
      const turn = await this.claim(call);
      await this.transition({
        key: site.key,
        from,
        to: child.output === undefined ? { status: 'succeeded', turn } : { status: 'succeeded', output: child.output, turn },
      });
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
    this.suspend(this.rt.clock.now() + childBackstopMs, 'child');
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
  private async startChildStep(call: Call, workflow: AnyWorkflowDefinition | string, input: unknown, options: StartChildOptions): Promise<Delivery> {
    const childName = typeof workflow === 'string' ? workflow : workflow?.name;
    this.rt.registry.forStart(childName); // an unknown workflow is refused at the call, before anything is recorded
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
    // Idempotent across a crash before the step is recorded. Detached: no parent, and bound by its
    // own workflow's default deadline only, not by this run's.
    const { run: child } = await this.createRun(childName, childInput, `$child:${this.run.id}:${site.key}`, { deadline: 'own' });
    const turn = await this.claim(call);
    this.fault('before-checkpoint', site.key);
    await this.insert(site, { status: 'succeeded', maxAttempts: 1, childRunId: child.id, output: child.id, turn });
    this.fault('after-checkpoint', site.key);
    // Lost with a crash here, the dispatch is made up by recovery (the child is due at start grace).
    await this.rt.dispatchRun(child);
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
    if (this.probeKey !== undefined) this.suspend(undefined, 'recheck');
    const output = make();
    const turn = await this.claim(call);
    await this.insert(site, { status: 'succeeded', maxAttempts: 1, output, turn });
    return { turn, ok: true, value: output };
  }

  /**
   * Creates the successor (idempotent on `$continue:<run id>`), records it as the `$continue` step,
   * and completes this run pointing at it. Replayed, it only completes again with the same successor.
   */
  private async continueAsNew(_call: Call, input: unknown): Promise<Delivery> {
    const json = this.payload(input ?? null, `input of continueAsNew`);
    const site = this.begin('child', '$continue');
    if (this.probeKey !== undefined) this.suspend(undefined, 'recheck');
    let successorId = site.recorded?.childRunId;
    if (successorId === undefined) {
      // One successor, whatever crashes: a repeated create returns the first one. A child that
      // continues as new stays its parent's child (the successor's end wakes it), and the chain
      // keeps the run's deadline.
      const { run: successor } = await this.createRun(this.run.workflow, json, `$continue:${this.run.id}`, {
        ...(this.run.parent === undefined ? {} : { parent: this.run.parent }),
        deadline: 'keep',
      });
      await this.insert(site, { status: 'succeeded', maxAttempts: 1, childRunId: successor.id });
      await this.rt.dispatchRun(successor);
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
      this.suspend(undefined, 'select');
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
      const input = this.payload(alt.input, `input of child ${JSON.stringify(alt.workflow)}`);
      // One child per alternative, whatever crashes; each look finds the same one.
      const { run: child, created } = await this.createRun(alt.workflow, input, `$child:${this.run.id}:${site.key}/${alt.key}`, {
        parent: { runId: this.run.id, stepKey: site.key },
        deadline: 'inherit',
      });
      children.set(alt.key, child.id);
      this.children.add(child.id);
      if (created) await this.rt.dispatchRun(child);
    }
    const now = this.rt.clock.now();
    let won: Json | undefined;
    for (const alt of alts) {
      won = await this.lookAt(alt, now, shift, children, messageOf);
      if (won !== undefined) break;
    }
    if (won === undefined) this.suspend(step.wakeAt, 'select');
    // Losing children are cancelled (and told at once when they run here).
    const winner = (won as { winner: string }).winner;
    for (const [key, childId] of children) {
      if (key === winner) continue;
      const child = await this.rt.store.runs.requestCancel(childId, this.rt.clock.now());
      if (child && child.status !== 'completed' && child.status !== 'failed' && child.status !== 'cancelled') {
        this.rt.executing.get(child.id)?.observeCancel(cancelledError(child.id, child.cancelReason));
        await this.rt.dispatchRun(child);
      }
    }
    const turn = await this.claim(call);
    await this.transition({
      key: site.key,
      from: { status: ['waiting'], attempt: step.attempt },
      to: { status: 'succeeded', output: won as Json, wakeAt: null, turn },
    });
    const { kind, value } = won as { kind: string; value: Json };
    return { turn, ok: true, value: { winner, kind, value }, onDeliver: taken(won) };
  }

  /** Whether one select alternative is ready now; its recorded outcome if so. */
  private async lookAt(
    alt: CheckedAlternative,
    now: number,
    shift: number,
    children: Map<string, string>,
    messageOf: (event: string) => number,
  ): Promise<Json | undefined> {
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
    for (
      let next = run?.status === 'completed' ? continuedAs(run.output) : undefined;
      next !== undefined;
      next = run?.status === 'completed' ? continuedAs(run.output) : undefined
    ) {
      run = await this.rt.store.runs.get(next);
    }
    return run;
  }

  /**
   * Creates a run this run starts — a child, a detached child, a successor — once: `idempotencyKey`
   * makes a repeated create (after a crash) return the first run. Its deadline: `inherit`, the
   * earlier of this run's and its workflow's default; `own`, its workflow's default only; `keep`,
   * this run's. Its `wakeAt` (the start grace) is never later than its deadline. It takes this
   * run's priority.
   */
  private async createRun(
    workflow: string,
    input: Json,
    idempotencyKey: string,
    how: { parent?: { runId: string; stepKey: string }; deadline: 'inherit' | 'own' | 'keep' },
  ): Promise<{ run: RunRecord; created: boolean }> {
    const def = this.rt.registry.forStart(workflow);
    // A key function that refuses the input fails this call, as it fails `startRun`.
    flowKeys(def, input);
    const made = await this.write((_fence, now) => {
      const grace = now + this.rt.timings.startGraceMs;
      const timing =
        how.deadline === 'keep'
          ? childStart(this.run.deadline, undefined, grace, now)
          : childStart(how.deadline === 'inherit' ? this.run.deadline : undefined, def.options.deadline, grace, now);
      // One trace for the whole tree: a run this run starts continues its trace.
      const trace = this.traceContext === undefined ? {} : { traceContext: this.traceContext };
      // The tree shares one priority: a run this run starts takes its priority.
      const priority = this.run.priority === undefined ? {} : { priority: this.run.priority };
      return this.rt.store.runs.create(
        {
          id: uuidv7(now),
          workflow,
          version: def.version,
          input,
          idempotencyKey,
          ...(how.parent ? { parent: how.parent } : {}),
          ...timing,
          ...trace,
          ...priority,
        },
        now,
      );
    });
    if (made.created && this.rt.lifecycle.runs) {
      this.rt.lifecycle.run(
        { ...this.rt.lifecycle.base(made.run), type: 'run.created', parentRunId: this.run.id, createdAt: made.run.createdAt },
        { input: made.run.input },
      );
    }
    return made;
  }
}
