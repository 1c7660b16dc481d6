import type { RunRecord, RunReopen } from '../model/run.js';

/**
 * What `runs.reopen` makes of a failed or cancelled run (the caller checked status and fence):
 * `pending`, due `now`, fence incremented (a writer of the old execution is fenced off), no lease,
 * output, error or cancel request, the retry record appended and the deadline as `reopen` says.
 * Shared by the stores that rewrite the whole record (memory, Redis, MongoDB); SQL writes the
 * same columns in one UPDATE.
 */
export function reopenedRun(run: RunRecord, reopen: RunReopen, now: number): RunRecord {
  const { lease: _lease, output: _output, error: _error, cancelReason: _reason, deadline, ...rest } = run;
  const next: RunRecord = {
    ...rest,
    status: 'pending',
    fence: run.fence + 1,
    cancelRequested: false,
    wakeAt: now,
    retries: [...(run.retries ?? []), structuredClone(reopen.retry)],
    updatedAt: now,
  };
  const kept = reopen.deadline === undefined ? deadline : (reopen.deadline ?? undefined);
  if (kept !== undefined) next.deadline = kept;
  return next;
}
