import { CairnError } from '../../errors/cairn-error.js';
import type { RetryRecord, RunRecord } from '../../model/run.js';
import type { StepRecord } from '../../model/step.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { checkIdentifier, checkOptions, checkRunId } from '../check-input.js';
import { isSingletonRun } from '../flow/singleton.js';

/** Options of `Engine.retryRun`. */
export interface RetryRunOptions {
  /** Why: kept in the run's retry record (`RunRecord.retries`). At most 1000 characters. */
  reason?: string;
}

// As long as a cancel reason: stored as text on every backend.
const MAX_REASON = 1000;

/** One run to reopen: the run as read, and the step keys it forgets. */
interface Reopening {
  run: RunRecord;
  forget: string[];
  children: string[];
}

/**
 * The step records a retry forgets, so those steps run again: every step that did not succeed and
 * whose outcome the code never went past, that is, every unfinished step (no turn: never handed
 * to the code) and every failed one delivered after the last succeeded step's turn. A failed step
 * delivered before a succeeded one was caught and the code went on: it is kept, and replays as the
 * same failure, so the code takes the same path as before and no kept output can meet a
 * different past. Compensation records are never forgotten (a run whose saga ran is refused).
 */
export function stepsToForget(steps: readonly StepRecord[]): StepRecord[] {
  let lastSucceeded = 0;
  for (const step of steps) if (step.status === 'succeeded' && step.turn !== undefined) lastSucceeded = Math.max(lastSucceeded, step.turn);
  return steps.filter((step) => step.status !== 'succeeded' && (step.turn === undefined || step.turn > lastSucceeded));
}

/** The run, checked retryable, with what it forgets; failed/cancelled children of forgotten child steps too (depth first). */
async function plan(rt: EngineRuntime, run: RunRecord, into: Reopening[], seen: Set<string>): Promise<Reopening> {
  if (run.status !== 'failed' && run.status !== 'cancelled') {
    throw new CairnError('RUN_CONFLICT', `Run ${run.id} is ${run.status}: only a failed or cancelled run can be retried`, {
      data: { runId: run.id, status: run.status },
    });
  }
  if (isSingletonRun(run)) {
    // Its successors may have started since it ended: reopened, it would run beside them.
    throw new CairnError('RUN_CONFLICT', `Run ${run.id} is a singleton run: it cannot be retried (start a new one, which takes its place in line)`, {
      data: { runId: run.id, status: run.status, reason: 'singleton' },
    });
  }
  seen.add(run.id);
  const steps = await rt.store.steps.load(run.id);
  const compensated = steps.find((step) => step.key.endsWith(':compensate'));
  if (compensated) {
    // The saga undid the run's succeeded steps: resuming would build on effects that are gone.
    throw new CairnError(
      'RUN_CONFLICT',
      `Run ${run.id} ran its compensations (${JSON.stringify(compensated.key)}); its effects were undone, so it cannot resume. Fork it from the first compensated step instead.`,
      {
        data: { runId: run.id, status: run.status, reason: 'compensated' },
      },
    );
  }
  const forgotten = stepsToForget(steps);
  const reopening: Reopening = { run, forget: forgotten.map((step) => step.key), children: [] };
  for (const step of forgotten) {
    if (step.kind !== 'child' || step.childRunId === undefined || seen.has(step.childRunId)) continue;
    const child = await rt.store.runs.get(step.childRunId);
    // A child that ended failed or cancelled would hand the re-run step the same failure: it is
    // retried too. A completed or still active child is found again by the step, as it is.
    if (!child || (child.status !== 'failed' && child.status !== 'cancelled')) continue;
    await plan(rt, child, into, seen);
    reopening.children.push(child.id);
  }
  into.push(reopening);
  return reopening;
}

/**
 * `engine.retryRun`: reopens a failed or cancelled run (and the failed or cancelled children its
 * re-run steps wait for, first) with `runs.reopen`, then dispatches each. The run stays due, so a
 * worker's recovery finds it even when this engine has no workers.
 */
export async function retryRun(rt: EngineRuntime, rawRunId: unknown, rawOptions: unknown): Promise<RunRecord> {
  const runId = checkRunId('retryRun runId', rawRunId);
  const options = checkOptions('retryRun options', rawOptions, ['reason']) as RetryRunOptions;
  const reason = options.reason === undefined ? undefined : checkIdentifier('retryRun reason', options.reason, MAX_REASON);
  const run = await rt.store.runs.get(runId);
  if (!run) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
  const order: Reopening[] = [];
  await plan(rt, run, order, new Set());
  let reopened: RunRecord | undefined;
  // Children first: when the parent's re-run child step looks for its child, it is running again.
  for (const { run: target, forget, children } of order) {
    const now = rt.clock.now();
    const retry: RetryRecord = { at: now, previousStatus: target.status as RetryRecord['previousStatus'], forgottenSteps: forget };
    if (target.error !== undefined) retry.previousError = target.error;
    if (reason !== undefined) retry.reason = reason;
    if (children.length > 0) retry.retriedChildren = children;
    // A deadline already passed would fail the run again at once: retrying is the operator's
    // decision to finish it, so the passed deadline is removed; one still ahead is kept.
    const deadline = target.deadline !== undefined && target.deadline <= now ? null : undefined;
    const written = await rt.store.runs.reopen(target.id, { fence: target.fence, forget, retry, ...(deadline === null ? { deadline } : {}) }, now);
    await rt.dispatchRun(written);
    if (written.id === runId) reopened = written;
  }
  return reopened as RunRecord;
}
