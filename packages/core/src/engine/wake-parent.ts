/** Waking the parent of a child run that ended, so the parent is not replayed while it waits. */
import { isTerminalRunStatus, type ParentRef } from '../model/run.js';
import type { EngineRuntime } from './engine-runtime.js';

/**
 * Wakes the parent of a child run that just ended (its terminal status written, or the child
 * deleted) and dispatches the parent's orchestrator job, so the parent replays once and takes the
 * child's outcome. Called right after the child's terminal write; a crash between that write and
 * this wake is covered by the parent's backstop (`timings.childBackstopMs`). A parent that ended
 * already is not dispatched (the wake is a no-op on it).
 */
export async function wakeParent(rt: EngineRuntime, parent: ParentRef | undefined): Promise<void> {
  if (parent === undefined) return;
  await rt.store.runs.wake(parent.runId, rt.clock.now());
  const run = await rt.store.runs.get(parent.runId);
  if (run && !isTerminalRunStatus(run.status)) await rt.dispatchRun(run);
}
