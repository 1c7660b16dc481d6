import type { EngineLogger } from '../../logging/engine-logger.js';
import type { WorkflowStore } from '../../store/workflow-store.js';

/** The signal topic completion hints travel on (the store scopes it to its own data): each message is a run id. */
export const RESULT_TOPIC = 'results';

/**
 * While the store's signals are healthy, `result()` of a run executing elsewhere still reads the
 * run at least this often: the safety net of a completion signal lost to a crash between the
 * completing write and its signal.
 */
export const RESULT_RECHECK_MS = 30_000;

// After the last waiter leaves, listening goes on this long, so a caller awaiting results one
// after another does not open and close the listening connection each time.
const LINGER_MS = 10_000;

interface Listener {
  established: Promise<boolean>;
  healthy: boolean;
  stop?: () => Promise<void>;
}

/** One waiter's subscription: whether signals can be relied on now, and its end. */
export interface ResultWatch {
  /** True while the listener is established and has not been lost since: a completion will be signalled. */
  healthy(): boolean;
  /** Stops hinting this waiter; idempotent. */
  end(): void;
}

/**
 * Completion hints between processes over the store's signals (`WorkflowStore.signals`): the
 * engine that ends a run `announce`s it; `result()` waiters of other processes `watch` the run and
 * are hinted to read it again. A hint is never an outcome: the waiter reads the run and resolves
 * only on what the store says, so a duplicated or stray hint costs one read, and a lost one is
 * covered by polling while the listener is down and by the re-read every `RESULT_RECHECK_MS`.
 *
 * One listener per engine, opened on the first watch and closed `LINGER_MS` after the last.
 */
export class ResultSignals {
  readonly #store: WorkflowStore;
  readonly #logger: EngineLogger;
  readonly #topic: string;
  readonly #watchers = new Map<string, Set<() => void>>();
  #count = 0;
  // The listener of the moment: settles once established (true) or not (false); healthy while
  // established and not lost since. A new one per (re)start, so an old one's callbacks change nothing.
  #listener: Listener | undefined;
  #linger: NodeJS.Timeout | undefined;
  // Announcements in flight, awaited by `drain` (the engine's stop).
  // Announcements in flight, counted rather than kept: one per ended run, and a Set of their
  // promises (with a finally each) was garbage that outlived overlapping runs.
  #announcing = 0;
  #drained: (() => void) | undefined;
  readonly #announced = (): void => {
    this.#announcing -= 1;
    if (this.#announcing === 0) this.#drained?.();
  };
  readonly #announceFailed = (error: unknown): void => {
    this.#announced();
    this.#logger.warn({ err: error }, 'A completion signal failed; result() in other processes finds the run by its re-read');
  };

  /**
   * @param topic - the signal topic whose messages are run ids: `RESULT_TOPIC` (run ends), or
   *   `STREAM_TOPIC` for `engine.request`'s wait on a run's stream writes (one listener shared by
   *   the engine's callers, as for results).
   */
  constructor(store: WorkflowStore, logger: EngineLogger, topic: string = RESULT_TOPIC) {
    this.#store = store;
    this.#logger = logger;
    this.#topic = topic;
  }

  /** True when the store has signals; without them waiters poll. */
  get available(): boolean {
    return this.#store.signals !== undefined;
  }

  /**
   * Tells waiters in other processes that the run ended (or is gone). Never rejects and is not
   * awaited by the caller: a failed signal is logged, and the waiters find the run by their re-read.
   */
  announce(runId: string): void {
    const signals = this.#store.signals;
    if (!signals) return;
    this.#announcing += 1;
    signals.notify(this.#topic, runId).then(this.#announced, this.#announceFailed);
  }

  /**
   * Hints `hint` whenever `runId` may have ended: its completion signal, a signal that was maybe
   * missed (the listener reconnected), or the listener lost (the waiter should poll). Resolves once
   * listening is established or has failed (then `healthy()` is false and the waiter polls), so a
   * read made after it cannot miss a signal sent after that read.
   */
  async watch(runId: string, hint: () => void): Promise<ResultWatch> {
    let set = this.#watchers.get(runId);
    if (!set) this.#watchers.set(runId, (set = new Set()));
    const own = () => hint();
    set.add(own);
    this.#count++;
    if (this.#linger) clearTimeout(this.#linger);
    this.#linger = undefined;
    let ended = false;
    const watch: ResultWatch = {
      healthy: () => this.#listener?.healthy === true,
      end: () => {
        if (ended) return;
        ended = true;
        set.delete(own);
        if (set.size === 0 && this.#watchers.get(runId) === set) this.#watchers.delete(runId);
        if (--this.#count === 0) this.#lingerThenStop();
      },
    };
    await this.#listen();
    return watch;
  }

  /** Stops listening (the engine's stop) once the announcements in flight have been sent. */
  async close(): Promise<void> {
    if (this.#announcing > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
    this.#drained = undefined;
    if (this.#linger) clearTimeout(this.#linger);
    this.#linger = undefined;
    await this.#unlisten();
  }

  #listen(): Promise<boolean> {
    const signals = this.#store.signals;
    if (!signals) return Promise.resolve(false);
    if (this.#listener) return this.#listener.established;
    const listener: Listener = { established: Promise.resolve(false), healthy: false };
    this.#listener = listener;
    const onSignal = (message?: string) => {
      if (this.#listener !== listener) return;
      if (message === undefined) {
        // Back after an outage: messages may have been missed, so every waiter looks.
        listener.healthy = true;
        this.#hintAll();
      } else {
        for (const hint of [...(this.#watchers.get(message) ?? [])]) hint();
      }
    };
    const onLost = () => {
      if (this.#listener !== listener) return;
      // Waiters poll until the listener is back.
      listener.healthy = false;
      this.#hintAll();
    };
    listener.established = signals.listen(this.#topic, onSignal, onLost).then(
      (stop) => {
        listener.stop = stop;
        if (this.#listener !== listener) {
          void stop().catch(() => undefined);
          return false;
        }
        listener.healthy = true;
        return true;
      },
      (error: unknown) => {
        // Polling covers it; the next watch tries again.
        if (this.#listener === listener) this.#listener = undefined;
        this.#logger.warn({ err: error }, 'listening for completion signals failed; result() polls the store');
        return false;
      },
    );
    return listener.established;
  }

  async #unlisten(): Promise<void> {
    const listener = this.#listener;
    if (!listener) return;
    this.#listener = undefined;
    // A waiter still here polls from now on.
    this.#hintAll();
    if (!(await listener.established)) return;
    await listener.stop?.().catch((error: unknown) => this.#logger.warn({ err: error }, 'stopping the completion-signal listener failed'));
  }

  #lingerThenStop(): void {
    if (!this.#listener) return;
    this.#linger = setTimeout(() => {
      this.#linger = undefined;
      if (this.#count === 0) void this.#unlisten();
    }, LINGER_MS);
    this.#linger.unref?.();
  }

  #hintAll(): void {
    for (const set of [...this.#watchers.values()]) for (const hint of [...set]) hint();
  }
}
