// The runs an execution starts: `ctx.child` and `ctx.childOutcome` (start, then wait for its
// end), `ctx.startChild` (detached), `ctx.continueAsNew` (a successor), each created once
// whatever crashes, with its deadline, trace and priority. Separate because run creation has its
// own rules (idempotency keys, deadlines, continue-as-new chains) that no other primitive shares.
import { CairnError } from '../../errors/cairn-error.js';
import { fromErrorRecord, toErrorRecord } from '../../errors/error-record-codec.js';
import type { Json } from '../../model/json.js';
import type { RunRecord, RunTags } from '../../model/run.js';
import type { AnyWorkflowDefinition } from '../define/any-workflow-definition.js';
import { IDENTIFIER_LIMITS, checkIdentifier } from '../check-input.js';
import { childOutcomeOf } from './child-outcome.js';
import { CONTINUED_AS, continuedAs } from '../define/continued-as.js';
import { flowKeys } from '../flow/flow-keys.js';
import { childStart } from './run-deadline.js';
import { definitionForStart } from './start-version.js';
import { workflowInput } from '../../validation/workflow-input.js';
import { uuidv7 } from '../uuid.js';
import type { ChildOptions, StartChildOptions } from '../define/workflow-context.js';
import { type Call, type Delivery, SUSPEND } from './call.js';
import type { Site } from './outcome.js';
import type { Replay } from './replay.js';

/** Child runs, detached children and continue-as-new. */
export class ChildCalls {
  constructor(private readonly r: Replay) {}

  /** Child runs this execution started or waits for: cancelled with the run (detached ones are not here). */
  readonly children = new Set<string>();

  /**
   * `ctx.child` (and `ctx.childOutcome`): starts the child once, then waits for it. The wait has no
   * timer but the long backstop (`childBackstopMs`): the child's end wakes this run (see
   * `wakeParent`), so this run is not replayed while its child runs.
   */
  async childStep(call: Call, workflow: AnyWorkflowDefinition | string, input: unknown, options: ChildOptions, what = 'ctx.child'): Promise<Delivery> {
    const childName = typeof workflow === 'string' ? workflow : workflow?.name;
    this.r.rt.registry.forStart(childName); // an unknown workflow is refused at the call, before anything is recorded
    if (typeof options === 'object' && options !== null && 'name' in options) checkIdentifier(`${what} options.name`, options.name, IDENTIFIER_LIMITS.stepName);
    const site = this.r.begin('child', options.name ?? `child:${childName}`);
    if (this.r.probeKey !== undefined) return this.r.replayOnly(call, site);
    return this.childFrom(call, site, childName, input);
  }

  /** A child call from its latest record (`site.recorded`) on: the first time, and again on a resume (see `Call.resume`). */
  private async childFrom(call: Call, site: Site, childName: string, input: unknown): Promise<Delivery> {
    let step = site.recorded;
    if (step?.status === 'succeeded') {
      const output = step.output;
      return this.r.finished(call, site, step, async () => ({ ok: true, value: output }));
    }
    if (step?.status === 'failed') {
      const error = fromErrorRecord(step.error ?? { name: 'Error', message: 'child failed' });
      return this.r.finished(call, site, step, async () => ({ ok: false, error }));
    }
    const { childBackstopMs } = this.r.rt.timings;
    if (!step) {
      // Idempotent across a crash before the step is recorded.
      const { run: child, created } = await this.createRun(childName, input, `$child:${this.r.run.id}:${site.key}`, {
        parent: { runId: this.r.run.id, stepKey: site.key },
        deadline: 'inherit',
      });
      this.r.fault('before-checkpoint', site.key);
      step = site.recorded = await this.r.insert(site, { status: 'waiting', maxAttempts: 1, childRunId: child.id });
      this.r.fault('after-checkpoint', site.key);
      this.children.add(child.id);
      if (created) {
        await this.r.rt.dispatchRun(child);
        call.resume = () => this.childFrom(call, site, childName, input);
        this.r.suspend(this.r.rt.clock.now() + childBackstopMs, 'child');
      }
      // Created by an execution that died before recording this step: the child may have run, and
      // ended, meanwhile, its wake-up spent on this very claim. Look at it now, as a wake would.
    }
    const childId = step.childRunId as string;
    const child = await this.lastOfChain(childId);
    const from = { status: ['waiting' as const], attempt: step.attempt };
    if (child?.status === 'completed') {
      const turn = await this.r.claim(call);
      await this.r.transition({
        key: site.key,
        from,
        to: child.output === undefined ? { status: 'succeeded', turn } : { status: 'succeeded', output: child.output, turn },
      });
      return { turn, ok: true, value: child.output };
    }
    if (!child || child.status === 'failed' || child.status === 'cancelled') {
      const status = child?.status ?? 'deleted';
      const options: { cause?: unknown; data: Json } = { data: { runId: this.r.run.id, childRunId: childId, status } };
      if (child?.error) options.cause = fromErrorRecord(child.error);
      const error = new CairnError('CHILD_FAILED', `Child run ${childId} (${childName}) ${status}${child?.error ? `: ${child.error.message}` : ''}`, options);
      const turn = await this.r.claim(call);
      await this.r.transition({ key: site.key, from, to: { status: 'failed', error: toErrorRecord(error), turn } });
      return { turn, ok: false, error };
    }
    this.children.add(childId);
    call.resume = () => this.childFrom(call, site, childName, input);
    this.r.suspend(this.r.rt.clock.now() + childBackstopMs, 'child');
  }

  /** `ctx.childOutcome`: the child's end, as `ctx.child` delivers it, becomes a value (see `childOutcomeOf`). */
  asChildOutcome(delivery: Delivery): Delivery {
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
  async startChildStep(call: Call, workflow: AnyWorkflowDefinition | string, input: unknown, options: StartChildOptions): Promise<Delivery> {
    const childName = typeof workflow === 'string' ? workflow : workflow?.name;
    this.r.rt.registry.forStart(childName); // an unknown workflow is refused at the call, before anything is recorded
    if (options.name !== undefined) checkIdentifier('ctx.startChild options.name', options.name, IDENTIFIER_LIMITS.stepName);
    const site = this.r.begin('child', options.name ?? `startChild:${childName}`);
    if (this.r.probeKey !== undefined) return this.r.replayOnly(call, site);
    const recorded = site.recorded;
    if (recorded) {
      if (recorded.status !== 'succeeded' || recorded.childRunId === undefined) {
        const call = { kind: site.kind, key: site.key, name: site.name };
        throw this.r.diverge({ reason: 'different-child', seq: site.seq, recorded: call, called: call });
      }
      const id = recorded.childRunId;
      return this.r.finished(call, site, recorded, async () => ({ ok: true, value: id }));
    }
    // Idempotent across a crash before the step is recorded. Detached: no parent, and bound by its
    // own workflow's default deadline only, not by this run's.
    const { run: child } = await this.createRun(childName, input, `$child:${this.r.run.id}:${site.key}`, { deadline: 'own' });
    const turn = await this.r.claim(call);
    this.r.fault('before-checkpoint', site.key);
    await this.r.insert(site, { status: 'succeeded', maxAttempts: 1, childRunId: child.id, output: child.id, turn });
    this.r.fault('after-checkpoint', site.key);
    // Lost with a crash here, the dispatch is made up by recovery (the child is due at start grace).
    await this.r.rt.dispatchRun(child);
    return { turn, ok: true, value: child.id };
  }

  /**
   * Creates the successor (idempotent on `$continue:<run id>`), records it as the `$continue` step,
   * and completes this run pointing at it. Replayed, it only completes again with the same successor.
   */
  async continueAsNew(_call: Call, input: unknown): Promise<Delivery> {
    const json = this.r.payload(input ?? null, `input of continueAsNew`);
    const site = this.r.begin('child', '$continue');
    if (this.r.probeKey !== undefined) this.r.suspend(undefined, 'recheck');
    let successorId = site.recorded?.childRunId;
    if (successorId === undefined) {
      // One successor, whatever crashes: a repeated create returns the first one. A child that
      // continues as new stays its parent's child (the successor's end wakes it), and the chain
      // keeps the run's deadline.
      const { run: successor } = await this.createRun(
        this.r.run.workflow,
        json,
        `$continue:${this.r.run.id}`,
        {
          ...(this.r.run.parent === undefined ? {} : { parent: this.r.run.parent }),
          deadline: 'keep',
          // The successor is the same work going on: it carries the run's tags as they stand.
          ...(this.r.tags === undefined ? {} : { tags: this.r.tags }),
        },
        'input of continueAsNew',
      );
      await this.r.insert(site, { status: 'succeeded', maxAttempts: 1, childRunId: successor.id });
      await this.r.rt.dispatchRun(successor);
      successorId = successor.id;
    }
    this.r.settle({ kind: 'completed', output: { [CONTINUED_AS]: successorId } });
    throw SUSPEND;
  }

  /**
   * Creates a run this run starts — a child, a detached child, a successor — once: `idempotencyKey`
   * makes a repeated create (after a crash) return the first run. Its deadline: `inherit`, the
   * earlier of this run's and its workflow's default; `own`, its workflow's default only; `keep`,
   * this run's. Its `wakeAt` (the start grace) is never later than its deadline. It takes this
   * run's priority.
   */
  async createRun(
    workflow: string,
    given: unknown,
    idempotencyKey: string,
    how: { parent?: { runId: string; stepKey: string }; deadline: 'inherit' | 'own' | 'keep'; tags?: RunTags },
    what = `input of child ${JSON.stringify(workflow)}`,
  ): Promise<{ run: RunRecord; created: boolean }> {
    const def = await this.versionForStart(workflow);
    // The version's input schema, then the JSON rule, as `startRun` applies them: a refused input
    // is INVALID_INPUT / NOT_SERIALIZABLE at the call, before anything is written.
    const input = this.r.payload(await workflowInput(def, given ?? null, what), what);
    // A key function that refuses the input fails this call, as it fails `startRun`.
    flowKeys(def, input);
    const made = await this.r.write((_fence, now) => {
      const grace = now + this.r.rt.timings.startGraceMs;
      const timing =
        how.deadline === 'keep'
          ? childStart(this.r.run.deadline, undefined, grace, now)
          : childStart(how.deadline === 'inherit' ? this.r.run.deadline : undefined, def.options.deadline, grace, now);
      // One trace for the whole tree: a run this run starts continues its trace.
      const trace = this.r.traceContext === undefined ? {} : { traceContext: this.r.traceContext };
      // The tree shares one priority: a run this run starts takes its priority.
      const priority = this.r.run.priority === undefined ? {} : { priority: this.r.run.priority };
      return this.r.rt.store.runs.create(
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
          ...(how.tags === undefined || Object.keys(how.tags).length === 0 ? {} : { tags: how.tags }),
        },
        now,
      );
    });
    if (made.created && this.r.rt.lifecycle.runs) {
      this.r.rt.lifecycle.run(
        { ...this.r.rt.lifecycle.base(made.run), type: 'run.created', parentRunId: this.r.run.id, createdAt: made.run.createdAt },
        { input: made.run.input },
      );
    }
    return made;
  }

  /**
   * The version a run this run starts takes: the newest that is not retired, as `startRun` chooses
   * (`definitionForStart`); the one listed last when every version is retired, because refusing
   * would fail this run, which a retire must leave alone (docs/semantics.md, "Retired versions").
   */
  private async versionForStart(workflow: string): Promise<AnyWorkflowDefinition> {
    try {
      return await definitionForStart(this.r.rt.store.versions, this.r.rt.registry, workflow);
    } catch (error) {
      if (CairnError.is(error, 'VERSION_RETIRED')) return this.r.rt.registry.forStart(workflow);
      throw error;
    }
  }

  /** The run, or the last run of its continue-as-new chain (a child that continued as new). */
  async lastOfChain(runId: string): Promise<RunRecord | undefined> {
    let run = await this.r.rt.store.runs.get(runId);
    for (
      let next = run?.status === 'completed' ? continuedAs(run.output) : undefined;
      next !== undefined;
      next = run?.status === 'completed' ? continuedAs(run.output) : undefined
    ) {
      run = await this.r.rt.store.runs.get(next);
    }
    return run;
  }
}
