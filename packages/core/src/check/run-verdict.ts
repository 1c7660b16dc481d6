import type { Divergence } from '../engine/execution/divergence.js';
import type { RunStatus } from '../model/run.js';

/**
 * What a check says of one run against a candidate build:
 * - `compatible`: the candidate code makes every recorded call of the history, in order and in its turn;
 * - `diverges`: it does not (`divergence` says where and how);
 * - `missing-version`: the run is pinned to a version the candidate build does not define;
 * - `unreadable`: the history could not be replayed at all (`reason` says why: a step kind this
 *   build does not know, written by a newer Cairn; a replay that never ended).
 */
export type Verdict = 'compatible' | 'diverges' | 'missing-version' | 'unreadable';

/** The check's verdict on one run. */
export interface RunVerdict {
  runId: string;
  workflow: string;
  version: string;
  status: RunStatus;
  verdict: Verdict;
  /** For `diverges`: the same data a NON_DETERMINISM error carries at run time. */
  divergence?: Divergence;
  /** For `missing-version` and `unreadable`: why, in one sentence. */
  reason?: string;
}
