import type { WorkflowStore } from '../../store/workflow-store.js';
import type { EngineLogger } from '../../logging/engine-logger.js';

/** The signal topic wake-ups travel on (the store scopes it to its own data). */
export const WAKE_TOPIC = 'runs';

/** What a worker does with wake-ups: dispatch one run, or look at the store for every due run. */
export interface WakeHandlers {
  /**
   * A run was started, woken or (`cancel`) cancelled elsewhere: claim it (through this process's
   * queue), and if it executes here already, let a cancel reach its running bodies.
   */
  run(runId: string, workflow: string, cancel: boolean): void;
  /**
   * A run was cancelled by an engine with workers, which dispatched it itself: only an execution of
   * it here, if any, should let the cancel reach its running bodies.
   */
  abort(runId: string): void;
  /** Wake-ups may have been missed (the listener reconnected): dispatch every due run. */
  sweep(): void;
  /**
   * A listening worker announced itself (`join` when it starts listening, `here` in answer to a
   * join) or its end (`leave`), with the workflows it runs (see `WorkerRoster`).
   */
  member(id: string, kind: MemberAnnouncement, workflows: readonly string[] | undefined): void;
}

/** What a worker says about itself on the wake-up topic. */
export type MemberAnnouncement = 'join' | 'here' | 'leave';

// The first element of a member announcement: not a run id (the engine's ids are UUIDs), and an
// announcement has four elements, which engines before decision 40 ignore.
const MEMBER = '~worker';
// A signal is at most 1000 characters (StoreSignals.notify): a longer workflow list is left out,
// and the worker is then counted as running every workflow.
const MAX_SIGNAL = 1000;

/**
 * Wake-ups through the store (`WorkflowStore.signals`), for engines whose queue does not cross
 * processes: an engine without workers `signal`s each run it made due (started, sent an event,
 * cancelled, woke as a parent); engines with workers `listen` and claim it through their own local
 * queue, whose caps and group fairness apply as to any job. A lost signal delays a run until the
 * next recovery pass (the run is due in the store either way), never loses it.
 */
export class StoreWakeups {
  constructor(
    private readonly store: WorkflowStore,
    private readonly logger: EngineLogger,
  ) {}

  /** True when the store has signals; without them, wake-ups are found by the recovery loop's polling. */
  get available(): boolean {
    return this.store.signals !== undefined;
  }

  /**
   * Tells listening workers that the run is due. Never rejects: a failed signal is logged and the
   * run, due in the store, waits for the next recovery pass of a worker.
   */
  async signal(runId: string, workflow: string, kind?: 'cancel' | 'abort'): Promise<void> {
    const signals = this.store.signals;
    if (!signals) return;
    try {
      await signals.notify(WAKE_TOPIC, JSON.stringify(kind === undefined ? [runId, workflow] : [runId, workflow, kind]));
    } catch (error) {
      this.logger.error({ runId, workflow, err: error }, `Run ${runId}: the wake-up signal failed; a worker's recovery pass will find the run`);
    }
  }

  /**
   * Tells the other listening workers that this one (`workerId`, running `workflows`) started
   * listening, is here, or leaves. Never rejects: a lost announcement costs duplicate claims or a
   * run left to a recovery pass (see `WorkerRoster`), which are logged as nothing here.
   */
  async announce(kind: MemberAnnouncement, workerId: string, workflows: readonly string[]): Promise<void> {
    const signals = this.store.signals;
    if (!signals) return;
    let message = JSON.stringify([MEMBER, workerId, kind, workflows]);
    if (message.length > MAX_SIGNAL) message = JSON.stringify([MEMBER, workerId, kind, null]);
    try {
      await signals.notify(WAKE_TOPIC, message);
    } catch (error) {
      this.logger.warn(
        { workerId, err: error },
        `announcing this worker (${kind}) to the others failed; runs signalled meanwhile may be claimed twice or wait for a recovery pass`,
      );
    }
  }

  /** Listens for wake-ups until the returned function is called; rejects as `signals.listen` does. */
  listen(handlers: WakeHandlers): Promise<() => Promise<void>> {
    const signals = this.store.signals;
    if (!signals) return Promise.resolve(async () => {});
    return signals.listen(WAKE_TOPIC, (message) => {
      if (message === undefined) return handlers.sweep();
      const member = parseMember(message);
      if (member) return handlers.member(member[0], member[1], member[2]);
      const wake = parseWake(message);
      // Anything else on the topic (another program, a newer format) is not ours to act on.
      if (!wake) return;
      if (wake[2] === 'abort') handlers.abort(wake[0]);
      else handlers.run(wake[0], wake[1], wake[2] === 'cancel');
    });
  }
}

/** `[runId, workflow]`, or with a third element: `'cancel'` or `'abort'`. */
function parseWake(message: string): [string, string, string?] | undefined {
  try {
    const value: unknown = JSON.parse(message);
    if (!Array.isArray(value) || typeof value[0] !== 'string' || typeof value[1] !== 'string') return undefined;
    if (value.length === 2) return [value[0], value[1]];
    if (value.length === 3 && typeof value[2] === 'string') return [value[0], value[1], value[2]];
  } catch {
    // Not JSON: ignored below.
  }
  return undefined;
}

/** `['~worker', id, kind, workflows | null]`; anything else is not an announcement. */
function parseMember(message: string): [string, MemberAnnouncement, string[] | undefined] | undefined {
  if (!message.startsWith(`["${MEMBER}"`)) return undefined;
  try {
    const value: unknown = JSON.parse(message);
    if (!Array.isArray(value) || value.length !== 4 || typeof value[1] !== 'string') return undefined;
    const kind = value[2];
    if (kind !== 'join' && kind !== 'here' && kind !== 'leave') return undefined;
    const workflows = Array.isArray(value[3]) && value[3].every((w) => typeof w === 'string') ? (value[3] as string[]) : undefined;
    return [value[1], kind, workflows];
  } catch {
    return undefined;
  }
}
