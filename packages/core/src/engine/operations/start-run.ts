// `engine.startRun`: checks the call, picks the version, validates the input, creates the run (or
// finds the one its idempotency key or start gate names) and runs it inline or dispatches it.
import { CairnError } from '../../errors/cairn-error.js';
import type { Json } from '../../model/json.js';
import type { NewRun } from '../../model/run.js';
import { checkTraceContext } from '../../observe/check-trace-context.js';
import { checkPriority } from '../../store/check-slot-arguments.js';
import { workflowInput } from '../../validation/workflow-input.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkOptions, invalidInput } from '../check-input.js';
import { checkTags, tagsUnsupported } from '../check-tags.js';
import type { AnyWorkflowDefinition } from '../define/any-workflow-definition.js';
import type { Duration } from '../define/duration.js';
import type { RunHandle, StartOptions } from '../engine-contract.js';
import type { EngineParts } from '../engine-parts.js';
import { executeRun } from '../execution/execute-run.js';
import { earliest, resolveDeadline } from '../execution/run-deadline.js';
import { definitionForStart } from '../execution/start-version.js';
import { flowKeys } from '../flow/flow-keys.js';
import { isReserved } from '../flow/start-chain.js';
import { checkStartGate, startGated, startGateOf } from '../flow/start-gate.js';
import { uuidv7 } from '../uuid.js';

/** How a handle reads its run's outcome (`engine.result`). */
export type ResultOf = (runId: string, options?: { timeout?: Duration }) => Promise<unknown>;

/** startRun's options once checked; the input is checked later, against the version's schema. */
interface CheckedStart {
  readonly name: string;
  readonly version: string | undefined;
  readonly key: string | undefined;
  readonly priority: number | undefined;
  readonly tags: Record<string, string> | undefined;
  readonly traceContext: Record<string, string> | undefined;
  readonly gate: ReturnType<typeof checkStartGate>;
  readonly deadline: StartOptions['deadline'];
  readonly mode: StartOptions['mode'];
}

/**
 * The name `startRun` was given: a string as it is, a definition's `name`; anything else is
 * handed on for `checkIdentifier` to refuse.
 */
function workflowName(workflow: unknown): unknown {
  if (typeof workflow !== 'object' || workflow === null || workflow instanceof String) return workflow;
  const { name } = workflow as { name?: unknown };
  if (typeof name !== 'string') throw invalidInput('startRun workflow', 'must be a workflow name or a definition made by defineWorkflow', workflow);
  return name;
}

/** Checks startRun's workflow name and options, reading nothing. */
function checkStart(parts: EngineParts, workflow: unknown, rawStartOptions: unknown): CheckedStart {
  const { rt, options } = parts;
  const name = checkIdentifier('startRun workflow', workflowName(workflow), IDENTIFIER_LIMITS.workflowName);
  const startOptions = checkOptions('startRun options', rawStartOptions, [
    'idempotencyKey',
    'mode',
    'version',
    'deadline',
    'traceContext',
    'priority',
    'tags',
    'singleton',
    'debounce',
    'batch',
  ]) as StartOptions;
  const { priority } = startOptions;
  if (priority !== undefined) checkPriority('startRun priority', priority);
  const tags = startOptions.tags === undefined ? undefined : checkTags('startRun tags', startOptions.tags);
  if (tags !== undefined && rt.store.runs.setTags === undefined) throw tagsUnsupported('startRun tags', rt.store.name);
  const traceContext =
    checkTraceContext('startRun traceContext', startOptions.traceContext) ??
    (options.traceContext === undefined ? undefined : checkTraceContext('createEngine traceContext()', options.traceContext()));
  const version = startOptions.version === undefined ? undefined : checkIdentifier('startRun version', startOptions.version, IDENTIFIER_LIMITS.version);
  const key =
    startOptions.idempotencyKey === undefined
      ? undefined
      : checkIdentifier('startRun idempotencyKey', startOptions.idempotencyKey, IDENTIFIER_LIMITS.idempotencyKey);
  if (key !== undefined && isReserved(key)) {
    throw invalidInput('startRun idempotencyKey', 'must not start with U+0001 (Cairn keeps those keys for singleton, debounce and batch runs)', key);
  }
  const gate = checkStartGate('startRun', startOptions, false);
  return { name, version, key, priority, tags, traceContext, gate, deadline: startOptions.deadline, mode: startOptions.mode };
}

/** `engine.startRun`. */
export async function startRun<O>(parts: EngineParts, result: ResultOf, workflow: unknown, input: unknown, rawStartOptions: unknown): Promise<RunHandle<O>> {
  const { rt, checked, options } = parts;
  const start = checkStart(parts, workflow, rawStartOptions);
  const { name, version, key } = start;
  const handle = (id: string, created: boolean): RunHandle<O> => ({ id, created, result: (resultOptions) => result(id, resultOptions) as Promise<O> });
  // An unknown workflow or version is refused before anything is read.
  const provisional = checked.registry.forStart(name, version);
  // No input (`undefined`) is stored, and handed to the workflow, as `null`: JSON has no `undefined`.
  const given = input === undefined ? null : input;
  const what = `input of workflow ${JSON.stringify(name)}`;
  // Without an input schema, a non-JSON input is refused before anything is read; with one, the
  // schema of the version the run goes on sees the input first (it may transform it).
  let json = provisional.options.input === undefined ? parts.checkPayload(given, what) : undefined;
  const mode = start.mode ?? options.startMode ?? 'queued';
  if (mode !== 'inline' && mode !== 'queued') throw invalidInput('startRun mode', "must be 'inline' or 'queued'", mode);
  let def: AnyWorkflowDefinition;
  try {
    def = await definitionForStart(rt.store.versions, checked.registry, name, version);
  } catch (error) {
    // A retired version takes no new run, but a repeated key is no new run: it finds the run that holds it.
    const existing = key !== undefined && CairnError.is(error, 'VERSION_RETIRED') ? await rt.store.runs.findByIdempotencyKey(name, key) : undefined;
    if (!existing) throw error;
    return handle(existing.id, false);
  }
  if (def.options.input !== undefined) json = parts.checkPayload(await workflowInput(def, given, what), what);
  else json ??= parts.checkPayload(given, what);
  // The keys are computed again at every claim: a key function that refuses this input fails the start instead.
  flowKeys(def, json);
  // startRun's own singleton, debounce or batch replaces the workflow's default one.
  const gate = start.gate ?? startGateOf(def.options);
  if (gate !== undefined && key !== undefined) {
    // The line of starts is kept in the run's idempotency key: a run cannot hold two.
    throw invalidInput('startRun idempotencyKey', `cannot be combined with ${Object.keys(gate)[0]}`, key);
  }
  const now = checked.clock.now();
  const newRun = newRunOf(parts, start, def, json, mode, now);
  const { run, created } = gate === undefined ? await rt.store.runs.create(newRun, now) : await startGated(rt, newRun, gate, now);
  if (created) {
    if (rt.lifecycle.runs) rt.lifecycle.run({ ...rt.lifecycle.base(run), type: 'run.created', createdAt: run.createdAt }, { input: run.input });
    if (mode === 'inline') runInline(parts, run);
    else await rt.dispatchRun(run);
  }
  return handle(run.id, created);
}

/** The run to create: its id, version, input, due time, deadline, trace context, priority and tags. */
function newRunOf(parts: EngineParts, start: CheckedStart, def: AnyWorkflowDefinition, json: Json, mode: 'inline' | 'queued', now: number): NewRun {
  const { key, traceContext, priority, tags } = start;
  const requested = start.deadline === undefined ? def.options.deadline : start.deadline;
  const deadline =
    requested === undefined
      ? undefined
      : resolveDeadline(requested, now, start.deadline === undefined ? `workflow ${JSON.stringify(def.name)} deadline` : 'startRun deadline');
  return {
    id: uuidv7(now),
    workflow: def.name,
    version: def.version,
    input: json,
    ...(key === undefined ? {} : { idempotencyKey: key }),
    // Never due later than its deadline, so recovery fails it then even if no worker started it.
    // Due at once when the store is the queue: the workers of other processes take it from there.
    wakeAt: earliest(mode === 'queued' && parts.storeDispatch() ? now : now + parts.checked.timings.startGraceMs, deadline) as number,
    ...(deadline === undefined ? {} : { deadline }),
    ...(traceContext === undefined ? {} : { traceContext }),
    ...(priority === undefined || priority === 0 ? {} : { priority }),
    ...(tags === undefined || Object.keys(tags).length === 0 ? {} : { tags }),
  };
}

/** Runs a new run's execution here and now, outside the queue's workers (stop() waits for it). */
function runInline(parts: EngineParts, run: { id: string; workflow: string; version: string }): void {
  const { rt, state } = parts;
  const execution = executeRun(rt, run.id).catch((error) =>
    rt.logger.error(
      { runId: run.id, workflow: run.workflow, version: run.version, workerId: parts.checked.workerId, err: error },
      `Run ${run.id}: inline execution failed`,
    ),
  );
  state.inlineRuns.add(execution);
  void execution.finally(() => state.inlineRuns.delete(execution));
}
