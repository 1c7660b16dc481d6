// `engine.cancel` (and the bulk cancel): the store records the request, and whoever executes the
// run is told, here at once, elsewhere by a signal through the store or a dispatch.
import { CairnError } from '../../errors/cairn-error.js';
import { isTerminalRunStatus, type RunRecord } from '../../model/run.js';
import { checkIdentifier, checkOptions, checkRunId } from '../check-input.js';
import type { CancelOptions } from '../engine-contract.js';
import type { EngineParts } from '../engine-parts.js';
import { cancelledError } from '../execution/outcome.js';

// The longest cancel reason, in UTF-16 code units (stored as text on every backend).
const MAX_CANCEL_REASON = 1000;

/** `engine.cancel`: checks the call, then `cancelRun`. */
export async function cancel(parts: EngineParts, rawRunId: unknown, rawCancelOptions: unknown): Promise<void> {
  const runId = checkRunId('cancel runId', rawRunId);
  const cancelOptions = checkOptions('cancel options', rawCancelOptions, ['reason']) as CancelOptions;
  const reason = cancelOptions.reason === undefined ? undefined : checkIdentifier('cancel reason', cancelOptions.reason, MAX_CANCEL_REASON);
  await cancelRun(parts, runId, reason);
}

/** Requests the run's cancellation and tells whoever executes it; the run as the request left it. */
export async function cancelRun(parts: EngineParts, runId: string, reason: string | undefined): Promise<RunRecord> {
  const { rt, wakeups } = parts;
  const now = parts.checked.clock.now();
  const run = await (reason === undefined ? rt.store.runs.requestCancel(runId, now) : rt.store.runs.requestCancel(runId, now, reason));
  if (!run) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
  if (isTerminalRunStatus(run.status)) return run;
  // The stored reason: the first request's, which may not be this one's.
  rt.executing.get(runId)?.observeCancel(cancelledError(runId, run.cancelReason));
  // Through the store, marked as a cancel, so a worker of another process executing the run
  // aborts its bodies at once (a cancel is rare: the extra signal costs no hot path). An engine
  // with workers dispatched the run itself: the others only abort an execution they hold.
  if (parts.storeDispatch()) await wakeups.signal(run.id, run.workflow, 'cancel');
  else {
    // Taken before the dispatch, whose job may start executing here at once.
    const executingHere = rt.executing.has(runId);
    await rt.dispatchRun(run);
    if (parts.storeIsQueue && !executingHere) await wakeups.signal(run.id, run.workflow, 'abort');
  }
  return run;
}
