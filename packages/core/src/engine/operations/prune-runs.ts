import { CairnError } from '../../errors/cairn-error.js';
import { isTerminalRunStatus, type DeleteCondition, type RunStatus } from '../../model/run.js';
import type { RunStore } from '../../store/workflow-store.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { checkOptions, invalidInput } from '../check-input.js';
import { type Duration, toMilliseconds } from '../define/duration.js';

/** `createEngine({ retention })`: how long runs are kept after they ended, per terminal status. */
export interface RetentionOptions {
  completed?: Duration;
  failed?: Duration;
  cancelled?: Duration;
}

/** Retention in milliseconds, per terminal status that has one. */
export type Retention = Partial<Record<'completed' | 'failed' | 'cancelled', number>>;

/** Options of `Engine.prune`. */
export interface PruneOptions {
  /** Delete runs that ended (last changed) strictly before this time. Default: now minus the status's retention. */
  before?: number;
  /** Which terminal statuses (default: those `retention` names, or all three with `before`). */
  statuses?: RunStatus[];
  /** Delete at most this many (default: no limit). */
  limit?: number;
}

const ENDED = ['completed', 'failed', 'cancelled'] as const;
// Retention reads and deletes in batches this size: each batch is one indexed read.
export const PRUNE_BATCH = 100;

/** Checks `createEngine({ retention })` (INVALID_INPUT on an unknown status or a bad duration). */
export function checkRetention(value: unknown): Retention | undefined {
  if (value === undefined) return undefined;
  const options = checkOptions('createEngine retention', value, ENDED);
  const retention: Retention = {};
  for (const status of ENDED) {
    if (options[status] !== undefined) retention[status] = toMilliseconds(options[status] as Duration, `createEngine retention.${status}`);
  }
  return retention;
}

/**
 * Deletes `ids` under `condition`: in one `runs.deleteMany` (one atomic unit, one commit) where the
 * store has it, else one `runs.delete` each. Returns how many were deleted.
 */
async function deleteRuns(runs: RunStore, ids: string[], condition: DeleteCondition): Promise<number> {
  if (ids.length === 0) return 0;
  if (runs.deleteMany !== undefined) return (await runs.deleteMany(ids, condition)).length;
  let deleted = 0;
  for (const id of ids) if (await runs.delete(id, condition)) deleted += 1;
  return deleted;
}

/**
 * Deletes ended runs (`engine.prune`, and each recovery pass when `retention` is set): for each
 * status, reads the oldest runs that ended before the cutoff in batches (`runs.listEnded`) and
 * deletes them under `runs.delete`'s condition (still that status, still ended before the cutoff),
 * so a run retried meanwhile is kept: a whole batch in one `runs.deleteMany` where the store has it. A child whose parent is still active is kept until its
 * parent ends (the parent may yet read it, or retry it). Non-terminal runs are never read here.
 */
export async function pruneRuns(rt: EngineRuntime, retention: Retention | undefined, rawOptions: unknown): Promise<{ deleted: number }> {
  const options = checkOptions('prune options', rawOptions, ['before', 'statuses', 'limit']) as PruneOptions;
  if (options.before !== undefined && (typeof options.before !== 'number' || !Number.isFinite(options.before)))
    throw invalidInput('prune before', 'must be a time in epoch milliseconds', options.before);
  if (options.limit !== undefined && (typeof options.limit !== 'number' || !Number.isInteger(options.limit) || options.limit < 1))
    throw invalidInput('prune limit', 'must be a positive integer', options.limit);
  if (options.statuses !== undefined) {
    if (!Array.isArray(options.statuses) || options.statuses.length === 0)
      throw invalidInput('prune statuses', 'must be a non-empty array of terminal statuses', options.statuses);
    for (const status of options.statuses) {
      if (typeof status !== 'string' || !isTerminalRunStatus(status as RunStatus))
        throw invalidInput('prune statuses', 'must hold only completed, failed or cancelled (active runs are never pruned)', status);
    }
  }
  const statuses = options.statuses ?? ENDED.filter((status) => options.before !== undefined || retention?.[status] !== undefined);
  if (statuses.length === 0)
    throw new CairnError('INVALID_INPUT', 'prune: pass `before` (or `statuses` with `before`), or configure createEngine({ retention })');
  const now = rt.clock.now();
  let remaining = options.limit ?? Infinity;
  let deleted = 0;
  for (const status of statuses) {
    const keep = retention?.[status as keyof Retention];
    const before = options.before ?? (keep === undefined ? undefined : now - keep);
    if (before === undefined) continue;
    let cursor: string | undefined;
    while (remaining > 0) {
      const batch = await rt.store.runs.listEnded({ status, updatedBefore: before, limit: PRUNE_BATCH, ...(cursor === undefined ? {} : { cursor }) });
      const condition = { statuses: [status], updatedBefore: before };
      const doomed: string[] = [];
      for (const run of batch.runs) {
        if (doomed.length >= remaining) break;
        if (run.parent) {
          const parent = await rt.store.runs.get(run.parent.runId);
          if (parent && !isTerminalRunStatus(parent.status)) continue;
        }
        doomed.push(run.id);
      }
      const gone = await deleteRuns(rt.store.runs, doomed, condition);
      deleted += gone;
      remaining -= gone;
      if (batch.nextCursor === undefined) break;
      cursor = batch.nextCursor;
    }
  }
  return { deleted };
}
