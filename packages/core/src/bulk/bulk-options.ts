import type { BulkAction, BulkCounts, BulkFilter, BulkOperationRecord } from '../model/bulk.js';
import { BULK_ACTIONS } from '../model/bulk.js';
import type { RunStatus } from '../model/run.js';
import { checkTags } from '../engine/check-tags.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkRunId, checkOptionalBoolean, checkOptions, invalidInput } from '../engine/check-input.js';

/** What a bulk action did to one run. */
export interface BulkRunOutcome {
  runId: string;
  /**
   * `done`: the action changed the run; `skipped`: the run was not (or no longer) in a state the
   * action applies to when it acted (ended, already paused, gone); `failed`: the action failed
   * with `code`.
   */
  outcome: 'done' | 'skipped' | 'failed';
  /** The error code, for `failed`. */
  code?: string;
  /** The error message, for `failed`. */
  message?: string;
}

/** Reported after each page a bulk operation finished, once its progress is in the store. */
export interface BulkProgress {
  /** The operation's id. */
  id: string;
  /** Pages done so far (those of earlier calls on a resumed operation included). */
  pages: number;
  /** Counts so far (those of earlier calls on a resumed operation included). */
  counts: BulkCounts;
  /** What the action did to each matched run of this page. */
  outcomes: BulkRunOutcome[];
}

/** Options of `engine.bulk`. */
export interface BulkOptions {
  /** Which runs (every field must match). */
  filter: BulkFilter;
  action: BulkAction;
  /** Count the runs the filter matches, and how many the action applies to now; change nothing. */
  dryRun?: boolean;
  /** Passed to each `cancel` or `retry` (at most 1000 characters of text without NUL). */
  reason?: string;
  /** Runs listed per page (1 to 1000, default 200); the progress is stored after each page. */
  pageSize?: number;
  /** Called after each page, once its progress is stored. Must not throw. */
  onProgress?: (progress: BulkProgress) => void;
}

/** Options of `engine.resumeBulk`. */
export interface ResumeBulkOptions {
  pageSize?: number;
  onProgress?: (progress: BulkProgress) => void;
}

/** What `engine.bulk` or `engine.resumeBulk` did. */
export interface BulkResult {
  /** The operation's record as stored at the end (absent for a dry run, which stores nothing). */
  operation?: BulkOperationRecord;
  dryRun: boolean;
  action: BulkAction;
  filter: BulkFilter;
  /** The operation's counts (all its pages); for a dry run, `matched` only. */
  counts: BulkCounts;
  /** Dry run only: how many matched runs the action applies to now, by their listed status. */
  applicable?: number;
  /** What this call did to each run it acted on (pages of earlier calls are in the counts only). */
  outcomes: BulkRunOutcome[];
}

const RUN_STATUSES: readonly RunStatus[] = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'];
const MAX_REASON = 1000;
// Error codes are short names; 200 leaves room for an application's own.
const MAX_ERROR_CODE = 200;
/** The default page size: the progress is written once per page. */
export const DEFAULT_BULK_PAGE = 200;

function time(what: string, value: unknown): number | undefined {
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value)))
    throw invalidInput(what, 'must be a finite number (epoch milliseconds)', value);
  return value;
}

/** Checks a bulk filter and returns a copy with only its known, checked fields. Throws `INVALID_INPUT`. */
export function checkBulkFilter(value: unknown): BulkFilter {
  if (value === undefined) throw invalidInput('bulk filter', 'is required (an empty object {} matches every run)', value);
  const raw = checkOptions('bulk filter', value, ['workflow', 'version', 'status', 'tags', 'createdAfter', 'createdBefore', 'errorCode', 'runIds']);
  const filter: BulkFilter = {};
  if (raw.workflow !== undefined) filter.workflow = checkIdentifier('bulk filter.workflow', raw.workflow, IDENTIFIER_LIMITS.workflowName);
  if (raw.version !== undefined) filter.version = checkIdentifier('bulk filter.version', raw.version, IDENTIFIER_LIMITS.version);
  if (raw.status !== undefined) {
    const list = Array.isArray(raw.status) ? (raw.status as unknown[]) : [raw.status];
    if (list.length === 0) throw invalidInput('bulk filter.status', 'must name at least one status', raw.status);
    for (const s of list)
      if (!(RUN_STATUSES as readonly unknown[]).includes(s)) throw invalidInput('bulk filter.status', `must be among ${RUN_STATUSES.join(', ')}`, s);
    filter.status = [...new Set(list as RunStatus[])];
  }
  if (raw.tags !== undefined) {
    const tags = checkTags('bulk filter.tags', raw.tags);
    if (Object.keys(tags).length === 0) throw invalidInput('bulk filter.tags', 'must name at least one tag', raw.tags);
    filter.tags = tags;
  }
  const after = time('bulk filter.createdAfter', raw.createdAfter);
  if (after !== undefined) filter.createdAfter = after;
  const before = time('bulk filter.createdBefore', raw.createdBefore);
  if (before !== undefined) filter.createdBefore = before;
  if (raw.errorCode !== undefined) filter.errorCode = checkIdentifier('bulk filter.errorCode', raw.errorCode, MAX_ERROR_CODE);
  if (raw.runIds !== undefined) {
    if (!Array.isArray(raw.runIds) || raw.runIds.length === 0 || raw.runIds.length > 1000)
      throw invalidInput('bulk filter.runIds', 'must be an array of 1 to 1000 run ids', raw.runIds);
    filter.runIds = [...new Set(raw.runIds.map((id) => checkRunId('bulk filter.runIds', id)))];
  }
  return filter;
}

function pageSizeOf(what: string, value: unknown): number {
  if (value === undefined) return DEFAULT_BULK_PAGE;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 1000) throw invalidInput(what, 'must be an integer from 1 to 1000', value);
  return value;
}

function progressOf(what: string, value: unknown): BulkOptions['onProgress'] {
  if (value !== undefined && typeof value !== 'function') throw invalidInput(what, 'must be a function', value);
  return value as BulkOptions['onProgress'];
}

/** `engine.bulk`'s options, checked. Throws `INVALID_INPUT` naming the field; nothing is read or written then. */
export function checkBulkOptions(value: unknown): Required<Pick<BulkOptions, 'filter' | 'action' | 'pageSize'>> & BulkOptions {
  if (value === undefined) throw invalidInput('bulk options', 'are required ({ filter, action })', value);
  const raw = checkOptions('bulk options', value, ['filter', 'action', 'dryRun', 'reason', 'pageSize', 'onProgress']);
  if (!(BULK_ACTIONS as readonly unknown[]).includes(raw.action)) throw invalidInput('bulk action', `must be one of ${BULK_ACTIONS.join(', ')}`, raw.action);
  const options: Required<Pick<BulkOptions, 'filter' | 'action' | 'pageSize'>> & BulkOptions = {
    filter: checkBulkFilter(raw.filter),
    action: raw.action as BulkAction,
    pageSize: pageSizeOf('bulk pageSize', raw.pageSize),
  };
  const dryRun = checkOptionalBoolean('bulk dryRun', raw.dryRun);
  if (dryRun !== undefined) options.dryRun = dryRun;
  if (raw.reason !== undefined) options.reason = checkIdentifier('bulk reason', raw.reason, MAX_REASON);
  const onProgress = progressOf('bulk onProgress', raw.onProgress);
  if (onProgress !== undefined) options.onProgress = onProgress;
  return options;
}

/** `engine.resumeBulk`'s options, checked. */
export function checkResumeBulkOptions(value: unknown): { pageSize: number; onProgress?: BulkOptions['onProgress'] } {
  const raw = checkOptions('resumeBulk options', value, ['pageSize', 'onProgress']);
  const onProgress = progressOf('resumeBulk onProgress', raw.onProgress);
  return { pageSize: pageSizeOf('resumeBulk pageSize', raw.pageSize), ...(onProgress === undefined ? {} : { onProgress }) };
}
