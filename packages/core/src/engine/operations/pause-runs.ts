// engine.pause / resume / pauseWorkflow / resumeWorkflow (docs/semantics.md, "Pause and resume";
// decision 63 of docs/decisions.md says how each backend keeps a paused run from being claimed).
import { CairnError } from '../../errors/cairn-error.js';
import type { PauseScope, WorkflowPause } from '../../model/pause.js';
import type { PauseChange, RunRecord, RunStatus } from '../../model/run.js';
import type { PauseStore } from '../../store/workflow-store.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkOptions, checkRunId } from '../check-input.js';
import type { EngineRuntime } from '../engine-runtime.js';

/** Options of `engine.pause` and `engine.pauseWorkflow`. */
export interface PauseOptions {
  /** Why: stored with the pause (`RunRecord.paused.reason`), at most 1000 characters of text without NUL. */
  reason?: string;
}

/** What `engine.pauseWorkflow` did. */
export interface WorkflowPauseResult {
  /** The workflow's pause as stored (the first one's time and reason when it was paused already). */
  pause: WorkflowPause;
  /** False when the workflow was paused already (its record was kept as it was). */
  changed: boolean;
  /** Runs this call paused (runs paused already are not counted). */
  runsPaused: number;
}

/** What `engine.resumeWorkflow` did. */
export interface WorkflowResumeResult {
  /** False when the workflow was not paused. */
  changed: boolean;
  /** Runs this call resumed (those paused by the workflow). */
  runsResumed: number;
}

// The longest pause reason, in UTF-16 code units (as a cancel reason).
const MAX_PAUSE_REASON = 1000;
const ALIVE: RunStatus[] = ['pending', 'running', 'waiting'];
// The store's largest page.
const PAGE = 1000;

/** What the engine gives the pause operations besides its runtime. */
export interface PauseParts {
  readonly rt: EngineRuntime;
  /**
   * Tells an execution of the run in another process to look at the run now (a store signal that
   * makes it read the run and observe the pause); a no-op without signals (the lease renewal does).
   */
  readonly tellElsewhere: (run: RunRecord) => Promise<void>;
}

function pausesOf(parts: PauseParts): PauseStore {
  const pauses = parts.rt.store.pauses;
  if (pauses === undefined) {
    throw new CairnError('PAUSE_UNSUPPORTED', `The store ${parts.rt.store.name} has no pause and resume (WorkflowStore.pauses); nothing was written`);
  }
  return pauses;
}

function reasonOf(what: string, rawOptions: unknown): string | undefined {
  const options = checkOptions(`${what} options`, rawOptions, ['reason']) as PauseOptions;
  return options.reason === undefined ? undefined : checkIdentifier(`${what} reason`, options.reason, MAX_PAUSE_REASON);
}

/** Publishes a pause change this engine wrote (`run.paused` / `run.unpaused`). */
function published(rt: EngineRuntime, change: PauseChange, type: 'run.paused' | 'run.unpaused', scope: PauseScope): void {
  if (!change.changed || !rt.lifecycle.runs) return;
  const reason = type === 'run.paused' ? change.run.paused?.reason : undefined;
  rt.lifecycle.run({ ...rt.lifecycle.base(change.run), type, scope, ...(reason === undefined ? {} : { reason }) });
}

/** Pauses one run with `scope` and lets an execution of it (here, or elsewhere by a signal) stop. */
async function pauseOne(parts: PauseParts, pauses: PauseStore, runId: string, scope: PauseScope, reason: string | undefined): Promise<PauseChange> {
  const { rt } = parts;
  const change = await pauses.pauseRun(runId, reason === undefined ? { scope } : { scope, reason }, rt.clock.now());
  published(rt, change, 'run.paused', scope);
  const executing = rt.executing.get(runId);
  if (executing) executing.observePause();
  else if (change.changed && change.run.status === 'running') await parts.tellElsewhere(change.run);
  return change;
}

/** Resumes one run (only a pause of `scope`, when given) and dispatches it. */
async function resumeOne(parts: PauseParts, pauses: PauseStore, runId: string, scope?: PauseScope): Promise<PauseChange> {
  const { rt } = parts;
  const change = await (scope === undefined ? pauses.resumeRun(runId, rt.clock.now()) : pauses.resumeRun(runId, rt.clock.now(), scope));
  published(rt, change, 'run.unpaused', scope ?? 'run');
  // Due now in the store (resumeRun woke it): the dispatch only saves waiting for recovery.
  if (change.changed) await rt.dispatchRun(change.run);
  return change;
}

/** `engine.pause`. */
export async function pauseRun(parts: PauseParts, rawRunId: unknown, rawOptions: unknown): Promise<PauseChange> {
  const runId = checkRunId('pause runId', rawRunId);
  const reason = reasonOf('pause', rawOptions);
  return pauseOne(parts, pausesOf(parts), runId, 'run', reason);
}

/** `engine.resume`. */
export async function resumeRun(parts: PauseParts, rawRunId: unknown): Promise<PauseChange> {
  const runId = checkRunId('resume runId', rawRunId);
  return resumeOne(parts, pausesOf(parts), runId);
}

/** Every run of `workflow` that has not ended, page by page (newest first). */
async function* aliveRuns(parts: PauseParts, workflow: string) {
  let cursor: string | undefined;
  do {
    const page = await parts.rt.store.runs.list(
      cursor === undefined ? { workflow, status: ALIVE, limit: PAGE } : { workflow, status: ALIVE, limit: PAGE, cursor },
    );
    yield* page.runs;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}

// A run that ended or was deleted since the page was read is passed over.
const passedOver = (error: unknown) => CairnError.is(error, 'RUN_CONFLICT') || CairnError.is(error, 'RUN_NOT_FOUND');

/**
 * Pauses every run of `workflow` that has not ended and is not paused (scope `workflow`, the
 * workflow's reason); returns how many it paused. Runs that end or vanish meanwhile are passed over.
 */
export async function sweepPausedWorkflow(parts: PauseParts, workflow: string, reason?: string): Promise<number> {
  const pauses = pausesOf(parts);
  let runsPaused = 0;
  for await (const run of aliveRuns(parts, workflow)) {
    if (run.paused !== undefined) continue;
    try {
      if ((await pauseOne(parts, pauses, run.id, 'workflow', reason)).changed) runsPaused++;
    } catch (error) {
      if (!passedOver(error)) throw error;
    }
  }
  return runsPaused;
}

/** `engine.pauseWorkflow`: the record first, so a run created during the sweep is paused at its first claim. */
export async function pauseWorkflow(parts: PauseParts, rawWorkflow: unknown, rawOptions: unknown): Promise<WorkflowPauseResult> {
  const workflow = checkIdentifier('pauseWorkflow workflow', rawWorkflow, IDENTIFIER_LIMITS.workflowName);
  const reason = reasonOf('pauseWorkflow', rawOptions);
  const pauses = pausesOf(parts);
  const { pause, changed } = await (reason === undefined
    ? pauses.pauseWorkflow(workflow, parts.rt.clock.now())
    : pauses.pauseWorkflow(workflow, parts.rt.clock.now(), reason));
  parts.rt.workflowPauses.add(workflow);
  return { pause, changed, runsPaused: await sweepPausedWorkflow(parts, workflow, pause.reason) };
}

/** `engine.resumeWorkflow`: the record first, so no run is paused again by its first claim after. */
export async function resumeWorkflow(parts: PauseParts, rawWorkflow: unknown): Promise<WorkflowResumeResult> {
  const workflow = checkIdentifier('resumeWorkflow workflow', rawWorkflow, IDENTIFIER_LIMITS.workflowName);
  const pauses = pausesOf(parts);
  const changed = await pauses.resumeWorkflow(workflow);
  parts.rt.workflowPauses.delete(workflow);
  let runsResumed = 0;
  for await (const run of aliveRuns(parts, workflow)) {
    if (run.paused?.scope !== 'workflow') continue;
    try {
      if ((await resumeOne(parts, pauses, run.id, 'workflow')).changed) runsResumed++;
    } catch (error) {
      if (!passedOver(error)) throw error;
    }
  }
  return { changed, runsResumed };
}

/** `engine.getWorkflowPause`. */
export async function getWorkflowPause(parts: PauseParts, rawWorkflow: unknown): Promise<WorkflowPause | undefined> {
  const workflow = checkIdentifier('getWorkflowPause workflow', rawWorkflow, IDENTIFIER_LIMITS.workflowName);
  return pausesOf(parts).getWorkflowPause(workflow);
}

/** `engine.listWorkflowPauses`. */
export async function listWorkflowPauses(parts: PauseParts): Promise<WorkflowPause[]> {
  return pausesOf(parts).listWorkflowPauses();
}

/**
 * Whether `pausedAtFirstClaim` may pause `run`, known without a store call: callers ask first, so
 * the common claim makes no promise for it (every run makes one claim at least).
 */
export function mayPauseAtFirstClaim(rt: EngineRuntime, run: RunRecord): boolean {
  return run.fence === 1 && rt.store.pauses !== undefined && rt.workflowPauses.has(run.workflow);
}

/**
 * A run's first claim (fence 1) while its workflow is paused: the run is paused (scope `workflow`)
 * and its lease given back before anything executes. Closes the gap between `pauseWorkflow`'s
 * sweep and the runs created after it read the workflow's runs. No store read unless this engine
 * knows the workflow paused (`WorkflowPauseCache`); then the record is read to confirm, and read
 * again after the pause: a `resumeWorkflow` that removed it meanwhile may have swept before this
 * pause landed, so the pause is lifted here. True when the run was paused here (the caller stops).
 */
export async function pausedAtFirstClaim(rt: EngineRuntime, run: RunRecord): Promise<boolean> {
  const pauses = rt.store.pauses;
  if (pauses === undefined || !mayPauseAtFirstClaim(rt, run)) return false;
  const pause = await pauses.getWorkflowPause(run.workflow);
  if (pause === undefined) {
    rt.workflowPauses.delete(run.workflow);
    return false;
  }
  const change = await pauses.pauseRun(
    run.id,
    pause.reason === undefined ? { scope: 'workflow' } : { scope: 'workflow', reason: pause.reason },
    rt.clock.now(),
  );
  published(rt, change, 'run.paused', 'workflow');
  try {
    await rt.store.runs.transition(
      run.id,
      run.fence,
      { from: ['running'], to: 'waiting', ...(run.deadline === undefined ? {} : { wakeAt: run.deadline }) },
      rt.clock.now(),
    );
  } catch (error) {
    // Someone else holds the run now (or it is gone): nothing of it ran here.
    if (!CairnError.is(error, 'LEASE_LOST') && !CairnError.is(error, 'RUN_CONFLICT') && !CairnError.is(error, 'RUN_NOT_FOUND')) throw error;
  }
  if ((await pauses.getWorkflowPause(run.workflow)) === undefined) {
    rt.workflowPauses.delete(run.workflow);
    const lifted = await pauses.resumeRun(run.id, rt.clock.now(), 'workflow');
    published(rt, lifted, 'run.unpaused', 'workflow');
    if (lifted.changed) await rt.dispatchRun(lifted.run);
  }
  return true;
}
