import type { RunStatus, RunTags } from './run.js';

/**
 * What `engine.bulk` does to each run its filter matches:
 * - `cancel`: requests cancellation (applies to a run that has not ended);
 * - `retry`: `engine.retryRun` (applies to a `failed` or `cancelled` run);
 * - `pause` / `resume`: `engine.pause` / `engine.resume` (applies to a run that has not ended; a
 *   pause to a run not paused yet, a resume to a paused one);
 * - `delete`: `engine.deleteRun` without `force` (applies to an ended run).
 */
export type BulkAction = 'cancel' | 'retry' | 'pause' | 'resume' | 'delete';

/** Every bulk action, in the order the docs list them. */
export const BULK_ACTIONS: readonly BulkAction[] = ['cancel', 'retry', 'pause', 'resume', 'delete'];

/**
 * Which runs a bulk operation acts on: those matching EVERY field given (an empty filter matches
 * every run). Kept in the operation's record as given, so a resumed operation acts on the same set.
 */
export interface BulkFilter {
  /** The run's workflow name, exactly. */
  workflow?: string;
  /** The version the run is pinned to, exactly. */
  version?: string;
  /** The run's status at the moment it is listed (one or several). */
  status?: RunStatus[];
  /** Only runs created at or after this time (epoch milliseconds). */
  createdAfter?: number;
  /** Only runs created strictly before this time (epoch milliseconds). */
  createdBefore?: number;
  /** Only runs carrying every one of these tags with exactly these values (`listRuns({ tags })`). */
  tags?: RunTags;
  /**
   * Only these runs (1 to 1000 ids, as a dashboard selection gives them): read one by one instead
   * of listed, in the order given; every other field must match too.
   */
  runIds?: string[];
  /** The code of the run's error (`RunRecord.error.code`), exactly; a run without an error never matches. */
  errorCode?: string;
}

/** How many runs a bulk operation matched and what it did to them. */
export interface BulkCounts {
  /** Runs the filter matched so far (each run once per page it was listed in). */
  matched: number;
  /** Runs the action changed. */
  done: number;
  /** Runs the action did not apply to when it acted: ended, already paused, gone meanwhile... */
  skipped: number;
  /** Runs the action failed on, with an error other than "does not apply". */
  failed: number;
}

/** A run a bulk action failed on. */
export interface BulkFailure {
  runId: string;
  /** The `CairnError` code (or `ERROR` for an error without one). */
  code: string;
  message: string;
}

/**
 * A bulk operation as the store keeps it (`BulkStore`): its filter and action, where its listing
 * stopped and what it did so far. Written once per page, so a crash loses at most the page under
 * way, which is acted on again when the operation is resumed.
 */
export interface BulkOperationRecord {
  /** Time-sortable unique id (UUIDv7). */
  id: string;
  /** Incremented by every `BulkStore.update`: the compare-and-set token. */
  revision: number;
  action: BulkAction;
  filter: BulkFilter;
  /** The reason given for a cancel or retry, passed to each run's action. */
  reason?: string;
  /** `running` until its last page is done, then `completed`. */
  state: 'running' | 'completed';
  /** The listing's cursor after the last page done; absent before the first page. */
  cursor?: string;
  /** Pages done. */
  pages: number;
  counts: BulkCounts;
  /** The first failures (at most `MAX_BULK_FAILURES`), oldest first. */
  failures: BulkFailure[];
  /** The process working on it and until when it counts as alive (epoch milliseconds). */
  owner?: { id: string; expiresAt: number };
  createdAt: number;
  updatedAt: number;
}

/** How many failures a bulk operation's record keeps; the counts go on past it. */
export const MAX_BULK_FAILURES = 100;
