import { CairnError } from '../errors/cairn-error.js';

// The errors a store answers a rejected write of an executing run with. Every backend raises them
// with these exact codes, messages and data (the conformance suite compares them), so they are
// built in one place.

/** `RUN_NOT_FOUND`: no run has this id. */
export function runNotFound(runId: string): CairnError {
  return new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
}

/** `LEASE_LOST`: `fence` is not the run's current fence (`current`, or null when the run has none). */
export function leaseLost(runId: string, fence: number | null, current: number | null): CairnError {
  return new CairnError('LEASE_LOST', `Run ${runId}: fence ${fence} is stale (current ${current})`, { data: { runId, fence, current } });
}

/** `RUN_CONFLICT`: the run's status forbids the write (`expected`, when given, lists those that allow it). */
export function runConflict(runId: string, status: string, expected?: readonly string[]): CairnError {
  const detail = expected === undefined ? `is ${status}` : `is ${status}, expected ${expected.join('|')}`;
  return new CairnError('RUN_CONFLICT', `Run ${runId} ${detail}`, { data: { runId, status } });
}
