import { CairnError } from '../../errors/cairn-error.js';
import type { Json } from '../../model/json.js';
import type { RunRecord } from '../../model/run.js';
import type { NewStep, StepRecord } from '../../model/step.js';
import { workflowInput } from '../../validation/workflow-input.js';
import { toJsonRoundTrip } from '../../serialization/json-value.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { checkIdentifier, checkOptions, checkRunId, IDENTIFIER_LIMITS, invalidInput } from '../check-input.js';
import { earliest, resolveDeadline } from '../execution/run-deadline.js';
import { uuidv7 } from '../uuid.js';
import { definitionForStart, versionRetired } from '../execution/start-version.js';

/** Options of `Engine.forkRun`. */
export interface ForkOptions {
  /** A step key of the source run: it and everything after it run again with the current code. */
  fromStep: string;
  /** The fork's input (default: the source's input). */
  input?: unknown;
}

const isCompensation = (step: StepRecord): boolean => step.key.endsWith(':compensate');

/**
 * The source steps a fork from `target` copies: those whose outcome the code saw (a turn) before
 * any step at or after `target`'s position was handed over. That set is closed both ways: every
 * copied step comes before `target` in call order, and every turn up to the last copied one is a
 * copied step's (or a state operation's, which the replay makes again), so the fork replays it
 * exactly and then runs `target` and what follows as new calls.
 */
export function stepsToCopy(steps: readonly StepRecord[], target: StepRecord): StepRecord[] {
  let firstLater = Infinity;
  for (const step of steps) if (!isCompensation(step) && step.seq >= target.seq) firstLater = Math.min(firstLater, step.turn ?? Infinity);
  return steps.filter((step) => !isCompensation(step) && step.turn !== undefined && step.turn < firstLater).sort((a, b) => a.seq - b.seq);
}

/** The copy of a finished step, as the fork records it (its attempts are not copied). */
function copiedStep(step: StepRecord): NewStep {
  const copy: NewStep = {
    key: step.key,
    name: step.name,
    kind: step.kind,
    seq: step.seq,
    status: step.status,
    maxAttempts: step.maxAttempts,
    queued: step.queued,
  };
  if (step.output !== undefined) copy.output = step.output;
  if (step.error !== undefined) copy.error = step.error;
  if (step.childRunId !== undefined) copy.childRunId = step.childRunId;
  if (step.turn !== undefined) copy.turn = step.turn;
  return copy;
}

/** Event names the source's waits and selects took messages of. */
function eventNames(steps: readonly StepRecord[]): Set<string> {
  const names = new Set<string>();
  for (const step of steps) {
    if (step.kind === 'event' && step.name.startsWith('event:')) names.add(step.name.slice('event:'.length));
    const won = step.kind === 'select' ? (step.output as { kind?: unknown; event?: unknown } | undefined) : undefined;
    if (won?.kind === 'event' && typeof won.event === 'string') names.add(won.event);
  }
  return names;
}

/**
 * The version a fork runs on, as a new start's: with the workflow's code, the one `startRun` would
 * choose (the newest listed that is not retired); without it (the CLI), the newest active one
 * stored, else the source's when no version is stored at all. `VERSION_RETIRED` when every version
 * is retired: a fork is a new run.
 */
async function forkVersion(rt: EngineRuntime, source: RunRecord): Promise<string> {
  if (rt.registry.current(source.workflow)) return (await definitionForStart(rt.store.versions, rt.registry, source.workflow)).version;
  const stored = await rt.store.versions.list(source.workflow);
  const active = stored.filter((v) => v.status === 'active');
  if (stored.length > 0 && active.length === 0) throw versionRetired(source.workflow, undefined);
  return active[active.length - 1]?.version ?? source.version;
}

/**
 * `engine.forkRun`: a new run of the source's workflow (current version) holding copies of the
 * source's steps before `fromStep` (see `stepsToCopy`) and of the messages sent to the source under
 * the event names its waits use, then dispatched. Refuses an unknown step key with
 * `STEP_NOT_FOUND` before writing anything.
 */
export async function forkRun(rt: EngineRuntime, rawRunId: unknown, rawOptions: unknown): Promise<RunRecord> {
  const runId = checkRunId('forkRun runId', rawRunId);
  if (rawOptions === undefined) throw invalidInput('forkRun options', 'must be an object with fromStep', rawOptions);
  const options = checkOptions('forkRun options', rawOptions, ['fromStep', 'input']) as unknown as ForkOptions;
  const fromStep = checkIdentifier('forkRun fromStep', options.fromStep, IDENTIFIER_LIMITS.stepName + 16);
  const source = await rt.store.runs.get(runId);
  if (!source) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
  const steps = await rt.store.steps.load(runId);
  const target = steps.find((step) => step.key === fromStep && !isCompensation(step));
  if (!target) {
    throw new CairnError('STEP_NOT_FOUND', `Run ${runId} has no step ${JSON.stringify(fromStep)} to fork from`, {
      data: { runId, stepKey: fromStep, keys: steps.filter((s) => !isCompensation(s)).map((s) => s.key) },
    });
  }
  const what = `input of the fork of run ${runId}`;
  const toJson = (value: unknown): Json => toJsonRoundTrip(value, { what, maxBytes: rt.maxPayloadBytes }).value;
  // A new input goes through the input schema of the version the fork runs on, when it has one
  // (then after the version is read); else it is refused before anything is read, as before.
  const early = options.input !== undefined && rt.registry.current(source.workflow)?.options.input === undefined ? toJson(options.input) : undefined;
  const version = await forkVersion(rt, source);
  const def = rt.registry.find(source.workflow, version);
  const input: Json =
    options.input === undefined
      ? source.input
      : def?.options.input !== undefined
        ? toJson(await workflowInput(def, options.input, what))
        : (early ?? toJson(options.input));
  const now = rt.clock.now();
  const deadline =
    def?.options.deadline === undefined ? undefined : resolveDeadline(def.options.deadline, now, `workflow ${JSON.stringify(source.workflow)} deadline`);
  const { run } = await rt.store.runs.create(
    {
      id: uuidv7(now),
      workflow: source.workflow,
      version,
      input,
      forkedFrom: { runId, stepKey: fromStep },
      // Not due before the copies are written (as a queued start, recovery takes it after the grace).
      wakeAt: earliest(now + rt.timings.startGraceMs, deadline) as number,
      ...(deadline === undefined ? {} : { deadline }),
      // A fork is the same work again: at the same priority.
      ...(source.priority === undefined ? {} : { priority: source.priority }),
      // And about the same things: it carries the source's tags (its own replays write its ctx.setTags calls again, in order).
      ...(source.tags === undefined ? {} : { tags: source.tags }),
    },
    now,
  );
  // Fence 0: nobody claimed the fork yet; a claim meanwhile would fence these writes off loudly.
  for (const step of stepsToCopy(steps, target)) await rt.store.steps.insert(run.id, 0, copiedStep(step), rt.clock.now());
  // Waits number the messages of a name from 1: copied waits took the source's first ones, so the
  // fork gets the source's messages of those names, in order, for its own waits to line up.
  for (const name of eventNames(steps)) {
    for (let seq = 1; ; seq += 1) {
      const message = await rt.store.events.get(runId, name, seq);
      if (!message) break;
      await rt.store.events.deliver(
        run.id,
        name,
        message.payload,
        rt.clock.now(),
        message.idempotencyKey === undefined ? undefined : { idempotencyKey: message.idempotencyKey },
      );
    }
  }
  await rt.store.runs.wake(run.id, rt.clock.now());
  await rt.dispatchRun(run);
  return run;
}
