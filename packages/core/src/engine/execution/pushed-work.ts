// The engine's entry points for pushed work (issue 35): a process that runs no workers — a
// serverless function — executes the one unit of work a request names, within a time budget. The
// claims and fences that make a duplicate job harmless make a duplicate push harmless too.
import type { DueRun, RunStatus } from '../../model/run.js';
import { checkTraceContext } from '../../observe/check-trace-context.js';
import { checkOptions, checkRunId, invalidInput } from '../check-input.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { executePushedRun } from './execute-run.js';
import { executeStepJob } from './execute-step-job.js';
import type { StepJob } from './step-job.js';

/** A queued step's job sent while a push executed its run: the pusher pushes it next. */
export interface PushedStep {
  /** The job, as a step worker's queue would have carried it (`engine.pushed.executeStep` takes it). */
  readonly job: StepJob;
  /** Push it after this long (a rate limit's or a retry's delay); absent: now. */
  readonly delayMs?: number;
}

/** How `engine.pushed.executeOnce` left the run. */
export interface PushedRunResult {
  /**
   * `completed`, `failed`, `cancelled`: the run ended in this push. `waiting`: it suspended
   * (`wakeAt`: when it is due again, absent while it waits for something without a timer).
   * `continue`: it stopped because the budget neared (or was woken as it suspended) and is due now:
   * push it again. `skipped`: nothing was claimed (the run is missing, ended, paused, or held by
   * another execution's unexpired lease, which will record its outcome); nothing was written.
   */
  readonly status: Extract<RunStatus, 'completed' | 'failed' | 'cancelled' | 'waiting'> | 'continue' | 'skipped';
  /** When the run is due again (`waiting` with a timer, `continue`). */
  readonly wakeAt?: number;
  /** Queued steps this push dispatched: they were not sent to any queue; push each (`executeStep`). */
  readonly steps: readonly PushedStep[];
}

/** Work pushed to a process that runs no workers (see docs/serverless.md). */
export interface PushedWork {
  /**
   * Executes the run `runId` in this process, once, as a worker would: claims it (a new fence and
   * lease), replays its history, runs what is new, and records the outcome, fenced. Guarantees:
   * - at most one execution of a run holds its lease at a time, so of two pushes of the same run
   *   (duplicates, concurrent, or a retry after a lost response) at most one executes; the other
   *   claims nothing and returns `skipped`, writing nothing;
   * - no primitive starts at or after `deadline` (epoch ms on the engine's clock): an execution
   *   still going then stops at its next primitive boundary — step bodies already running finish
   *   and are recorded — and the run is left due at once (`continue`); a body that outlives the
   *   deadline is not cut short, so the push returns after it;
   * - a step recorded is never run again by a later push; a push killed mid-execution leaves the
   *   run leased until its lease expires, then due (a body in flight at the kill runs again, as
   *   after any crash);
   * - queued steps it dispatches are returned in `steps`, not sent to a queue.
   * `INVALID_INPUT` for a malformed run id or deadline, before the store is touched.
   */
  executeOnce(runId: string, options: { deadline: number }): Promise<PushedRunResult>;
  /**
   * Runs one attempt of a queued step (a `PushedStep.job`), as a step worker does: the attempt
   * starts with a compare-and-set, so of two pushes of one job only one runs the body; a stale or
   * duplicate job does nothing. The result is recorded and the run woken (push the run next).
   * Returns the steps it dispatched again (a rate limit's delay). `INVALID_INPUT` for a malformed
   * job, before the store is touched.
   */
  executeStep(job: StepJob): Promise<{ steps: readonly PushedStep[] }>;
  /**
   * The runs due now, earliest first, at most `limit` (1 to 1000): waiting or pending runs whose
   * timer passed, and running runs whose lease expired. One indexed read (`runs.findDue`).
   */
  dueRuns(limit: number): Promise<DueRun[]>;
}

/** Builds `engine.pushed` over the engine's runtime; `sinks` receive the step jobs of a run executing for a push. */
export function createPushedWork(rt: EngineRuntime, sinks: Map<string, (step: PushedStep) => void>): PushedWork {
  // Collects the step jobs a run's execution sends while this push holds the run.
  const collecting = async <T>(runId: string, body: () => Promise<T>): Promise<{ value: T; steps: PushedStep[] }> => {
    const steps: PushedStep[] = [];
    const mine = (step: PushedStep) => void steps.push(step);
    const owner = !sinks.has(runId);
    if (owner) sinks.set(runId, mine);
    try {
      return { value: await body(), steps };
    } finally {
      if (owner) sinks.delete(runId);
    }
  };
  return {
    async executeOnce(rawRunId, rawOptions) {
      const runId = checkRunId('pushed.executeOnce runId', rawRunId);
      const options = checkOptions('pushed.executeOnce options', rawOptions, ['deadline']);
      const { deadline } = options;
      if (typeof deadline !== 'number' || !Number.isFinite(deadline))
        throw invalidInput('pushed.executeOnce deadline', 'must be a finite number (epoch ms)', deadline);
      const { value: pushed, steps } = await collecting(runId, () => executePushedRun(rt, runId, deadline));
      const { after } = pushed;
      if (!pushed.claimed || pushed.joined) return { status: 'skipped', steps };
      if (after === undefined) return { status: 'waiting', steps };
      if (after.status === 'waiting' || after.status === 'pending' || after.status === 'running') {
        if (after.wakeAt === undefined) return { status: 'waiting', steps };
        return { status: after.wakeAt <= rt.clock.now() ? 'continue' : 'waiting', wakeAt: after.wakeAt, steps };
      }
      return { status: after.status, steps };
    },
    async executeStep(rawJob) {
      const job = checkStepJob(rawJob);
      const { steps } = await collecting(job.runId, () => executeStepJob(rt, job));
      return { steps };
    },
    async dueRuns(limit) {
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw invalidInput('pushed.dueRuns limit', 'must be an integer from 1 to 1000', limit);
      return rt.store.runs.findDue(rt.clock.now(), limit);
    },
  };
}

/** A step job as a push carries it: the fields a step worker reads, checked, nothing else kept. */
function checkStepJob(value: unknown): StepJob {
  const job = checkOptions('pushed.executeStep job', value, ['runId', 'workflow', 'key', 'attempt', 'traceContext', 'priority']);
  const runId = checkRunId('pushed.executeStep job.runId', job.runId);
  const { workflow, key, attempt, priority, traceContext } = job;
  if (typeof workflow !== 'string' || workflow.length === 0) throw invalidInput('pushed.executeStep job.workflow', 'must be a non-empty string', workflow);
  if (typeof key !== 'string' || key.length === 0) throw invalidInput('pushed.executeStep job.key', 'must be a non-empty string', key);
  if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1)
    throw invalidInput('pushed.executeStep job.attempt', 'must be an integer ≥ 1', attempt);
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isInteger(priority)))
    throw invalidInput('pushed.executeStep job.priority', 'must be an integer', priority);
  const trace = checkTraceContext('pushed.executeStep job.traceContext', traceContext);
  return { runId, workflow, key, attempt, ...(priority === undefined ? {} : { priority }), ...(trace === undefined ? {} : { traceContext: trace }) };
}
