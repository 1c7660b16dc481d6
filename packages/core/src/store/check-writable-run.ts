import type { Fence } from './workflow-store.js';
import { isTerminalRunStatus, type RunStatus } from '../model/run.js';
import { leaseLost, runConflict, runNotFound } from './write-rejections.js';

/**
 * The check every write of an executing run makes, in the reference store's order: the run exists
 * (`RUN_NOT_FOUND`), `fence`, when a number, is its current fence (`LEASE_LOST`), it is not
 * terminal (`RUN_CONFLICT`). Returns `run` when the write may go ahead; throws otherwise. `run` is
 * the stored run as the backend read it, or `undefined` when there is none.
 */
export function checkWritableRun<R extends { fence: number; status: RunStatus | string }>(runId: string, fence: Fence, run: R | undefined | null): R {
  if (run === undefined || run === null) throw runNotFound(runId);
  if (fence !== null && run.fence !== fence) throw leaseLost(runId, fence, run.fence);
  if (isTerminalRunStatus(run.status as RunStatus)) throw runConflict(runId, run.status);
  return run;
}
