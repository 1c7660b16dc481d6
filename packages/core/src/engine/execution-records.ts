// What an execution writes and how it reads back what was written: every store write fenced by
// the run's claim (a lost lease changes nothing), the lease it holds, the claims made without
// progress (careful mode, decision 33), fault points, payload checks, and recorded outcomes handed
// back in their turn. Separate because it is the one place an execution meets the store's step
// records; the primitives above only say what to record (decision 44).
import { CairnError } from '../errors/cairn-error.js';
import { fromErrorRecord } from '../errors/error-record-codec.js';
import type { Json } from '../model/json.js';
import type { RunRecord } from '../model/run.js';
import type { NewStep, StepRecord, StepTransition } from '../model/step.js';
import { toJsonRoundTrip } from '../serialization/json-value.js';
import type { AnyWorkflowDefinition } from './any-workflow-definition.js';
import type { EngineRuntime } from './engine-runtime.js';
import { type FaultPoint, NO_FAULTS } from './fault-point.js';
import type { Site } from './execution-outcome.js';
import { ExecutionCalls, type Call, type Delivery, SUSPEND } from './execution-calls.js';

/** The store side of an execution: fenced writes, the lease, and replaying recorded outcomes. */
export class ExecutionRecords extends ExecutionCalls {
  /**
   * The highest `StepRecord.fence` of the run: the claim whose execution last recorded a step (0
   * when none carries one). Set to this execution's fence by its first step insert.
   */
  protected lastInsertFence: number;
  /**
   * Until when this execution's lease holds, as its last claim or renewal gave it (kept up by the
   * lease renewal). Past it, a step's body does not run before a fenced write says the lease is
   * still ours.
   */
  leaseHeldUntil: number;

  constructor(rt: EngineRuntime, run: RunRecord, steps: readonly StepRecord[], def: AnyWorkflowDefinition, probeKey?: string) {
    super(rt, run, steps, def, probeKey);
    let lastFence = 0;
    for (const step of steps) if (step.fence !== undefined && step.fence > lastFence) lastFence = step.fence;
    this.lastInsertFence = lastFence;
    this.leaseHeldUntil = run.lease?.expiresAt ?? rt.clock.now() + rt.timings.leaseMs;
  }

  protected fault(point: FaultPoint, stepKey?: string): void {
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
  protected markerWrite: Promise<void> | undefined;

  /** Every store write of this execution goes through here: fenced, and refused once ended. */
  protected async write<T>(op: (fence: number, now: number) => Promise<T>): Promise<T> {
    if (this.markerWrite !== undefined) await this.markerWrite;
    if (this.closed) throw SUSPEND;
    const result = await op(this.run.fence, this.rt.clock.now());
    if (this.closed) throw SUSPEND;
    return result;
  }

  /** Records a step (`steps.insert`) through `write`'s rules, written out: it is on every step's path. */
  protected async insert(site: Site, step: Omit<NewStep, 'key' | 'name' | 'kind' | 'seq'>): Promise<StepRecord> {
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
  protected claimsWithoutProgress(): number {
    return this.run.fence - this.lastInsertFence;
  }

  /** Moves a recorded step on (`steps.transition`) through `write`'s rules, written out as `insert` is. */
  protected async transition(transition: StepTransition): Promise<StepRecord> {
    if (this.markerWrite !== undefined) await this.markerWrite;
    if (this.closed) throw SUSPEND;
    const written = await this.rt.store.steps.transition(this.run.id, this.run.fence, transition, this.rt.clock.now());
    if (this.closed) throw SUSPEND;
    return written;
  }

  protected payload(value: unknown, what: string): Json {
    return toJsonRoundTrip(value, { what, maxBytes: this.rt.maxPayloadBytes }).value;
  }

  /**
   * A step the history holds as finished: its outcome goes to the code in its recorded turn. A
   * step finished without a turn (by a queued step worker, or before turns were recorded) is
   * given one first, so every later execution delivers it at the same point.
   */
  protected async finished(
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
    if (this.probeKey === undefined) await this.transition({ key: site.key, from: { status: [step.status], attempt: step.attempt }, to: { status: step.status, turn } });
    return { turn, ...(await outcome()) };
  }

  protected stepFailed(site: Site, error: Error): CairnError {
    return new CairnError('STEP_FAILED', `Step ${JSON.stringify(site.key)} failed: ${error.message}`, {
      cause: error,
      data: { runId: this.run.id, key: site.key },
    });
  }

  /** Probe mode: serve what is recorded (in its turn), wait on everything else. */
  protected async replayOnly(call: Call, site: Site): Promise<Delivery> {
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
