/** Waking the parent of a child run that ended, so the parent is not replayed while it waits. */
import { isTerminalRunStatus, type ParentRef } from '../../model/run.js';
import type { EngineRuntime } from '../engine-runtime.js';
import type { RunStore } from '../../store/workflow-store.js';

// A store keeps promises apart from wake-ups with both methods or neither (decision 78).
const keepsPromises = (runs: RunStore): runs is RunStore & Required<Pick<RunStore, 'promiseWake' | 'keepPromise'>> =>
  runs.promiseWake !== undefined && runs.keepPromise !== undefined;

/**
 * Makes the parent due no later than one lease from now, before the write that ends its child
 * (the child's terminal transition, or its deletion). `runs.wake` keeps the earlier of the stored
 * `wakeAt` and the time given, so this never delays the parent, and the wake-up right after the
 * write (`wakeParent`) makes it due at once. If the process dies between the two, the parent is
 * still due within `leaseMs`, and a recovery pass dispatches it: the parent moves within
 * `leaseMs + recoveryIntervalMs` of the crash instead of at its backstop (`childBackstopMs`, 1 h).
 * If the ending write then fails (the child's lease was lost), the parent replays once at that
 * time, finds the child running and waits again. One request, and only for a run with a parent
 * (decision 56).
 */
export async function preWakeParent(rt: EngineRuntime, parent: ParentRef | undefined): Promise<void> {
  if (parent === undefined) return;
  const now = rt.clock.now();
  const runs = rt.store.runs;
  // A promise survives a claim of the parent before the ending write (decision 78); a plain wake
  // is merged into a due wake-up that such a claim consumes.
  if (keepsPromises(runs)) await runs.promiseWake(parent.runId, now + rt.timings.leaseMs, now);
  else await runs.wake(parent.runId, now + rt.timings.leaseMs);
}

/**
 * Wakes the parent of a child run that just ended (its terminal status written, or the child
 * deleted) and dispatches the parent's orchestrator job, so the parent replays once and takes the
 * child's outcome. Called right after the child's terminal write, which `preWakeParent` preceded:
 * a crash between that write and this wake delays the parent by at most `leaseMs` (plus a
 * recovery pass). A parent that ended already is not dispatched (the wake is a no-op on it).
 */
export async function wakeParent(rt: EngineRuntime, parent: ParentRef | undefined): Promise<void> {
  if (parent === undefined) return;
  const runs = rt.store.runs;
  // The wake-up keeps the pre-wake's promise: the child's end is written, so the parent no longer
  // needs it (and a claim after this one is not made to wait for it again).
  if (keepsPromises(runs)) await runs.keepPromise(parent.runId, rt.clock.now());
  else await runs.wake(parent.runId, rt.clock.now());
  const run = await rt.store.runs.get(parent.runId);
  if (run && !isTerminalRunStatus(run.status)) await rt.dispatchRun(run);
}
