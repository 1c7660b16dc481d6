import type { Clock } from '../../clock/clock.js';
import { CairnError } from '../../errors/cairn-error.js';
import { fromErrorRecord } from '../../errors/error-record-codec.js';
import { isTerminalRunStatus, type RunRecord } from '../../model/run.js';
import type { WorkflowStore } from '../../store/workflow-store.js';
import { RESULT_RECHECK_MS, type ResultSignals, type ResultWatch } from './result-signals.js';

// Why a pause ends early; nobody sees it. With a reason: `abort()` without one builds a DOMException.
const WOKEN = Symbol('woken');

// Polling starts here and doubles up to the configured ceiling: quick results come back in
// milliseconds, long runs cost one read per ceiling interval.
const FIRST_POLL_MS = 10;

/** One waiter of a run: told when the run ends here, or when its execution here ends. */
interface Listener {
  ended(run: RunRecord): void;
  left(): void;
}

/**
 * Waits for runs to end: in-process notifications first, then the store, read when a completion
 * signal hints at it (`ResultSignals`) or by polling with backoff.
 *
 * - While this process executes the run, the waiter makes no store read at all: the execution
 *   tells it when the run ends (`notify`) or when the execution stops without ending it (`left`:
 *   suspended, crashed, lease lost), and only then does it look at the store again.
 * - Otherwise, on a store with signals, it reads the run once listening for completion signals is
 *   established, and then only when hinted (the run's completion signal, a listener that came
 *   back after an outage) or every `RESULT_RECHECK_MS` (a signal lost to a crash). It polls while
 *   the listener is down or could not be established, and on a store without signals.
 * - It resolves only on what a read of the store (or this process's own execution) says: a hint is
 *   never an outcome.
 */
export class ResultWaiter {
  private readonly listeners = new Map<string, Set<Listener>>();

  /**
   * @param executingHere - true while this process has an execution of the run in flight.
   * @param signals - completion hints from other processes.
   */
  constructor(
    private readonly executingHere: (runId: string) => boolean,
    private readonly signals: ResultSignals,
  ) {}

  /** Called when a run ended in this process. */
  notify(run: RunRecord): void {
    const set = this.listeners.get(run.id);
    if (!set) return;
    this.listeners.delete(run.id);
    for (const listener of set) listener.ended(run);
  }

  /** Called when this process's execution of a run stopped, whether or not the run ended. */
  left(runId: string): void {
    for (const listener of this.listeners.get(runId) ?? []) listener.left();
  }

  /**
   * Resolves with the completed run; throws `RUN_FAILED` / `RUN_CANCELLED` (cause: the recorded
   * error), `RUN_NOT_FOUND`, or `RESULT_TIMEOUT`.
   */
  async wait(store: WorkflowStore, clock: Clock, runId: string, options: { timeoutMs: number | undefined; pollIntervalMs: number }): Promise<RunRecord> {
    const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : clock.now() + options.timeoutMs;
    // Subscribe before the first read: a run that ends while we read must not be missed until the
    // next poll (which can be a whole pollIntervalMs away).
    let ended: RunRecord | undefined;
    // Set by every reason to look again; a hint that comes during a read is kept for after it.
    let hinted = false;
    let wakeUp: (() => void) | undefined;
    const hint = () => {
      hinted = true;
      wakeUp?.();
    };
    const listener: Listener = {
      ended: (run) => {
        ended = run;
        hint();
      },
      left: hint,
    };
    const set = this.listeners.get(runId) ?? new Set();
    set.add(listener);
    this.listeners.set(runId, set);
    // Completion signals from other processes, once the run is not (or no longer) executing here.
    let watch: ResultWatch | undefined;
    try {
      let delay = FIRST_POLL_MS;
      for (;;) {
        if (!ended && this.executingHere(runId)) {
          // The execution here will say when it ends or leaves: wait for that (or the timeout),
          // then look again with the fastest poll, as for a run just started.
          const remaining = deadline - clock.now();
          if (remaining <= 0) throw new CairnError('RESULT_TIMEOUT', `Run ${runId} is still executing`, { data: { runId, status: 'running' } });
          if (!hinted) await this.pause(clock, remaining, (wake) => (wakeUp = wake));
          wakeUp = undefined;
          hinted = false;
          delay = FIRST_POLL_MS;
          continue;
        }
        // Listening before the read: a completion after it is signalled to this waiter.
        if (!ended && watch === undefined && this.signals.available) watch = await this.signals.watch(runId, hint);
        hinted = false;
        const run = ended ?? (await store.runs.get(runId));
        if (!run) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
        if (isTerminalRunStatus(run.status)) return settle(run);
        if (ended) return settle(ended);
        const remaining = deadline - clock.now();
        if (remaining <= 0) throw new CairnError('RESULT_TIMEOUT', `Run ${runId} is still ${run.status}`, { data: { runId, status: run.status } });
        // Signals healthy: the completion will be signalled; read again only as a safety net.
        const signalled = watch?.healthy() === true;
        if (!hinted) await this.pause(clock, Math.min(signalled ? RESULT_RECHECK_MS : delay, remaining), (wake) => (wakeUp = wake));
        wakeUp = undefined;
        // Polling starts at its fastest whenever signals fail, and backs off while they stay down.
        delay = signalled ? FIRST_POLL_MS : Math.min(delay * 2, options.pollIntervalMs);
      }
    } finally {
      watch?.end();
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(runId) === set) this.listeners.delete(runId);
    }
  }

  /** Sleeps up to `ms` (`Infinity`: until woken), ending early when `arm`'s wake-up is called. */
  private async pause(clock: Clock, ms: number, arm: (wake: () => void) => void): Promise<void> {
    const controller = new AbortController();
    arm(() => controller.abort(WOKEN));
    if (ms === Number.POSITIVE_INFINITY) {
      await new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }));
      return;
    }
    await clock.sleep(ms, controller.signal).catch(() => {});
  }
}

function settle(run: RunRecord): RunRecord {
  if (run.status === 'completed') return run;
  const cause = run.error ? fromErrorRecord(run.error) : undefined;
  const code = run.status === 'cancelled' ? 'RUN_CANCELLED' : 'RUN_FAILED';
  throw new CairnError(code, `Run ${run.id} ${run.status}${run.error ? `: ${run.error.message}` : ''}`, { cause, data: { runId: run.id, status: run.status } });
}
