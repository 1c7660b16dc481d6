// What a listening worker does with each wake-up the store delivers (decisions 34 and 40): claim
// the run through its own queue when the roster says this worker is the one, let a cancel reach
// an execution running here, sweep the store after a reconnect, keep the roster of listeners.
// Kept apart from `createEngine`: it is the cross-process side of dispatch, and reads best in
// one piece beside `StoreWakeups` and `WorkerRoster`.
import { cancelledError } from '../execution/outcome.js';
import type { EngineRuntime } from '../engine-runtime.js';
import type { StoreWakeups, WakeHandlers } from './store-wakeups.js';
import type { WorkerRoster } from './worker-roster.js';

/** What the handlers act on. */
export interface WakeUpParts {
  readonly rt: EngineRuntime;
  readonly wakeups: StoreWakeups;
  /** The other listening workers, so that one of them claims each signalled run. */
  readonly roster: WorkerRoster;
  /** One recovery pass: dispatches every due run. */
  readonly recover: () => Promise<unknown>;
  /** Called after a recovery pass succeeded (ends an outage's log). */
  readonly recovered: () => void;
  /** False once the engine stops: failures are not logged then. */
  readonly running: () => boolean;
}

/**
 * The handlers of `StoreWakeups.listen` for one started engine. A run of a workflow this process
 * does not run is left to the processes that do; sweeps asked for while one runs are folded into
 * one more. Failures are logged, never thrown (a lost wake-up waits for the next recovery pass).
 */
export function wakeUpHandlers(parts: WakeUpParts): WakeHandlers {
  const { rt, wakeups, roster } = parts;
  const { registry, clock, workerId } = rt;
  // A cancel signalled by another process, for a run executing here: read the reason it stored.
  const observeCancelElsewhere = async (runId: string) => {
    try {
      const run = await rt.store.runs.get(runId);
      if (run?.cancelRequested) rt.executing.get(runId)?.observeCancel(cancelledError(runId, run.cancelReason));
      // A pause travels as the same signal: the execution stops before its next primitive.
      if (run?.paused !== undefined) rt.executing.get(runId)?.observePause();
    } catch (error) {
      // The lease renewal observes the cancel anyway, within a third of the lease.
      rt.logger.warn({ runId, workerId, err: error }, `Run ${runId}: reading a cancel signalled elsewhere failed`);
    }
  };

  // One recovery pass after a listener reconnected (signals may have been missed meanwhile);
  // passes asked for while one runs are folded into one more.
  let sweeping: Promise<void> | undefined;
  let sweepAgain = false;
  const sweep = (): Promise<void> => {
    if (sweeping) {
      sweepAgain = true;
      return sweeping;
    }
    sweeping = (async () => {
      do {
        sweepAgain = false;
        try {
          await parts.recover();
          parts.recovered();
        } catch (error) {
          if (parts.running()) rt.logger.error({ workerId, err: error }, 'recovery pass after a wake-up listener reconnected failed');
        }
      } while (sweepAgain && parts.running());
    })().finally(() => (sweeping = undefined));
    return sweeping;
  };

  return {
    run: (runId, workflow, cancel) => {
      // A workflow this process does not run is left to the processes that do.
      if (!registry.current(workflow)) return;
      // Executing here: the cancel reaches its running bodies now, not at the next renewal.
      if (cancel && rt.executing.has(runId)) void observeCancelElsewhere(runId);
      // Every listening worker gets the signal; one claims the run (decision 40).
      if (!roster.claims(runId, workflow, clock.now())) return;
      rt.dispatchRun({ id: runId, workflow }).catch((error) => {
        if (parts.running()) rt.logger.error({ runId, workflow, workerId, err: error }, `Run ${runId}: dispatch after a wake-up failed`);
      });
    },
    abort: (runId) => {
      if (rt.executing.has(runId)) void observeCancelElsewhere(runId);
    },
    sweep: () => {
      void sweep();
      // Announcements may have been missed too: the others answer a join with `here`.
      void wakeups.announce('join', workerId, registry.names());
    },
    member: (id, kind, workflows) => {
      if (id === workerId) return;
      if (kind === 'leave') return roster.remove(id);
      roster.add(id, workflows);
      if (kind === 'join') void wakeups.announce('here', workerId, registry.names());
    },
  };
}
