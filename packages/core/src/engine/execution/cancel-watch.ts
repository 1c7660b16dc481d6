/**
 * How a running execution or queued step body learns that its run was cancelled or passed its
 * deadline when the news did not start in this process.
 */
import type { CairnError } from '../../errors/cairn-error.js';
import type { RunRecord } from '../../model/run.js';
import type { EngineRuntime, EngineTimings } from '../engine-runtime.js';
import { cancelledError, deadlineExceededError } from './outcome.js';

/**
 * How often a queued step worker reads its run while the body runs, and how often an execution
 * renews its lease (which also returns `cancelRequested`): a third of the lease, at least 1 ms.
 * A cancel sent from another process therefore reaches a running body within this interval plus
 * one store read.
 */
export function cancelCheckMs(timings: EngineTimings): number {
  return Math.max(1, Math.floor(timings.leaseMs / 3));
}

/**
 * Why a body of `run` must stop, or `undefined` to go on: the deadline passed (DEADLINE_EXCEEDED),
 * cancellation was requested (CANCELLED with its reason), or the run ended or vanished meanwhile.
 */
export function stopReason(run: RunRecord | undefined, runId: string, now: number): CairnError | undefined {
  if (!run) return cancelledError(runId, 'the run was deleted');
  if (run.deadline !== undefined && (run.deadline <= now || run.error?.code === 'DEADLINE_EXCEEDED')) return deadlineExceededError(runId, run.deadline);
  if (run.cancelRequested) return cancelledError(runId, run.cancelReason);
  if (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') return cancelledError(runId, `the run ended ${run.status}`);
  return undefined;
}

/**
 * Aborts `target` with the error of `stopReason` once it applies to the run: at the deadline (a
 * timer, exact on this worker's clock) or at the first periodic read (every `cancelCheckMs`) that
 * finds the run cancelled, ended or gone. A failed read is skipped (the next one retries). Returns
 * the controller that ends the watch.
 */
export function watchRun(rt: EngineRuntime, run: RunRecord, target: AbortController): AbortController {
  const watch = new AbortController();
  const every = cancelCheckMs(rt.timings);
  void (async () => {
    while (!watch.signal.aborted && !target.signal.aborted) {
      const untilDeadline = run.deadline === undefined ? Infinity : Math.max(0, run.deadline - rt.clock.now());
      try {
        await rt.clock.sleep(Math.min(every, untilDeadline), watch.signal);
      } catch {
        return;
      }
      let latest: RunRecord | undefined = run;
      if (run.deadline === undefined || run.deadline > rt.clock.now()) {
        try {
          latest = await rt.store.runs.get(run.id);
        } catch {
          continue;
        }
      }
      if (watch.signal.aborted) return;
      const reason = stopReason(latest, run.id, rt.clock.now());
      if (reason) {
        target.abort(reason);
        return;
      }
    }
  })();
  return watch;
}
