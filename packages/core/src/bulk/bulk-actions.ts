import { CairnError } from '../errors/cairn-error.js';
import type { BulkAction, BulkFilter } from '../model/bulk.js';
import { isTerminalRunStatus, type PauseChange, type RunQuery, type RunRecord, type RunSummary } from '../model/run.js';
import type { BulkRunOutcome } from './bulk-options.js';
import { hasTags } from '../store/matches-run-query.js';

/** The engine's own operations a bulk action calls, one run at a time (each with its own checks). */
export interface BulkActors {
  /** Requests cancellation; the run as it is after the request (unchanged when it had ended). */
  cancel(runId: string, reason?: string): Promise<RunRecord>;
  retry(runId: string, reason?: string): Promise<unknown>;
  pause(runId: string): Promise<PauseChange>;
  resume(runId: string): Promise<PauseChange>;
  /** Deletes an ended run; `RUN_ACTIVE` for a run that has not ended. */
  delete(runId: string): Promise<boolean>;
}

/** The store query that lists the filter's candidates (what `runs.list` serves from an index). */
export function bulkListQuery(filter: BulkFilter): RunQuery {
  const query: RunQuery = {};
  if (filter.workflow !== undefined) query.workflow = filter.workflow;
  if (filter.status !== undefined) query.status = filter.status;
  if (filter.tags !== undefined) query.tags = filter.tags;
  if (filter.createdAfter !== undefined) query.createdAfter = filter.createdAfter;
  if (filter.createdBefore !== undefined) query.createdBefore = filter.createdBefore;
  return query;
}

/**
 * Whether a run matches every field of the filter. The listing already filtered on workflow,
 * status, tags and the time range; they are checked again on what the store returned (and are the
 * only check for runs named by `runIds`), with version and error code, which no index serves.
 */
export function matchesBulkFilter(filter: BulkFilter, run: RunSummary): boolean {
  if (filter.workflow !== undefined && run.workflow !== filter.workflow) return false;
  if (filter.version !== undefined && run.version !== filter.version) return false;
  if (filter.status !== undefined && !filter.status.includes(run.status)) return false;
  if (filter.createdAfter !== undefined && run.createdAt < filter.createdAfter) return false;
  if (filter.createdBefore !== undefined && run.createdAt >= filter.createdBefore) return false;
  if (filter.tags !== undefined && !hasTags(run, filter.tags)) return false;
  if (filter.errorCode !== undefined && run.error?.code !== filter.errorCode) return false;
  return true;
}

/** Whether the action applies to a run with this listed status (the dry run's `applicable`). */
export function bulkApplies(action: BulkAction, run: RunSummary): boolean {
  const ended = isTerminalRunStatus(run.status);
  switch (action) {
    case 'cancel':
      return !ended && !run.cancelRequested;
    case 'retry':
      return run.status === 'failed' || run.status === 'cancelled';
    case 'pause':
      return !ended && run.paused === undefined;
    case 'resume':
      return !ended && run.paused !== undefined;
    case 'delete':
      return ended;
  }
}

const skipped = (runId: string): BulkRunOutcome => ({ runId, outcome: 'skipped' });
const done = (runId: string): BulkRunOutcome => ({ runId, outcome: 'done' });

// Refusals that say "the run is not (or no longer) in a state this action applies to".
function notApplicable(action: BulkAction, error: unknown): boolean {
  if (CairnError.is(error, 'RUN_NOT_FOUND')) return true;
  if (action === 'delete') return CairnError.is(error, 'RUN_ACTIVE');
  if (!CairnError.is(error, 'RUN_CONFLICT')) return false;
  // A retry refused because the saga undid the run's effects is a failure the operator must see.
  return !(action === 'retry' && (error.data as { reason?: unknown } | undefined)?.reason === 'compensated');
}

async function attempt(action: BulkAction, actors: BulkActors, runId: string, reason: string | undefined): Promise<boolean> {
  switch (action) {
    case 'cancel':
      // The run as it was when the request reached it: an ended one was left as it was.
      return !isTerminalRunStatus((await actors.cancel(runId, reason)).status);
    case 'retry':
      await actors.retry(runId, reason);
      return true;
    case 'pause':
      return (await actors.pause(runId)).changed;
    case 'resume':
      return (await actors.resume(runId)).changed;
    case 'delete':
      return actors.delete(runId);
  }
}

/**
 * Acts on one listed run. The listing may be stale: the action's own checks decide (a cancel of a
 * run that completed meanwhile is a skip, not a failure). A run listed as ended is skipped by
 * cancel, pause and resume without a write; one listed as active is skipped by delete and retry.
 */
export async function actOnRun(action: BulkAction, actors: BulkActors, run: RunSummary, reason: string | undefined): Promise<BulkRunOutcome> {
  // resume and pause are not skipped on the listed mark: a listing is a snapshot, the write decides.
  const listedSkip = action === 'pause' || action === 'resume' ? isTerminalRunStatus(run.status) : !bulkApplies(action, run);
  if (listedSkip) return skipped(run.id);
  try {
    return (await attempt(action, actors, run.id, reason)) ? done(run.id) : skipped(run.id);
  } catch (error) {
    if (notApplicable(action, error)) return skipped(run.id);
    const code = error instanceof CairnError ? error.code : 'ERROR';
    return { runId: run.id, outcome: 'failed', code, message: error instanceof Error ? error.message : String(error) };
  }
}
