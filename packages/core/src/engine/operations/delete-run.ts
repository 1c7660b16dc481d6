// `engine.deleteRun`: a run and everything it recorded, gone; a running one only with `force`, and
// then its parent learns at once that the child is gone.
import { CairnError } from '../../errors/cairn-error.js';
import { isTerminalRunStatus } from '../../model/run.js';
import { checkOptionalBoolean, checkOptions, checkRunId } from '../check-input.js';
import type { EngineParts } from '../engine-parts.js';
import { preWakeParent, wakeParent } from '../wakeups/wake-parent.js';

/** `engine.deleteRun`: true when the run was there and is deleted. */
export async function deleteRun(parts: EngineParts, rawRunId: unknown, rawDeleteOptions: unknown): Promise<boolean> {
  const { rt } = parts;
  const runId = checkRunId('deleteRun runId', rawRunId);
  const deleteOptions = checkOptions('deleteRun options', rawDeleteOptions, ['force']);
  const force = checkOptionalBoolean('deleteRun force', deleteOptions.force);
  const run = await rt.store.runs.get(runId);
  if (!run) return false;
  if (!isTerminalRunStatus(run.status) && !force) {
    throw new CairnError('RUN_ACTIVE', `Run ${runId} is ${run.status}; cancel it first or pass { force: true }`, { data: { runId, status: run.status } });
  }
  // A child deleted while running never ends on its own: its parent takes it as ended
  // (CHILD_FAILED, status 'deleted') now, and within a lease if this process dies after the
  // delete. A terminal child woke its parent when it ended.
  const active = !isTerminalRunStatus(run.status);
  if (active) await preWakeParent(rt, run.parent);
  const deleted = await rt.store.runs.delete(runId);
  if (deleted && active) await wakeParent(rt, run.parent);
  // A waiter of another process learns RUN_NOT_FOUND now rather than at its re-read.
  if (deleted && active) parts.resultSignals.announce(runId);
  return deleted;
}
