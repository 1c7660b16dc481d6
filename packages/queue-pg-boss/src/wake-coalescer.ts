/** Bounds of the window a NOTIFY waits before it wakes a slot (see `WakeCoalescer`). */
export interface WakeWindow {
  /** The wait after a quiet spell or after a wake whose fetch found work. */
  minMs: number;
  /** The longest wait, reached by doubling while wakes keep finding nothing. */
  maxMs: number;
}

interface QueueState {
  windowMs: number;
  /** When this process last woke a slot for the queue (0: never). */
  wokeAt: number;
  /** When the last notification of the queue arrived (0: never). */
  notifiedAt: number;
  /** When a fetch of this process last returned a job of the queue (0: never). */
  foundAt: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Turns a stream of "a job is ready on queue Q" notifications into at most one wake-up per queue
 * per window in this process. Every process receives every NOTIFY, but only one of them gets each
 * job. A process is *losing* a queue while nothing it fetched since its last wake was a job of it
 * (other processes took them): a loser doubles its window up to `maxMs`, and once there — or while
 * it runs a job of the queue — it stops waking for the stream and leaves the queue to its idle
 * poll and to the slot that finishes the running job (decision 47). A fetch of this process that
 * returns a job of the queue (`found`), or a notification after a quiet spell longer than `maxMs`,
 * makes it react after `minMs` again. A process that is not losing reacts after `minMs`, or after
 * `maxMs` while it runs a job of the queue (the slot that finishes it fetches again at once).
 *
 * So in a busy fleet only the processes that keep winning jobs fetch on NOTIFY, and the others
 * fetch when their poll sees a job ready: fetches per job stay flat as processes are added, where
 * a wake per window per loser grew with them.
 *
 * Guarantees: `wake(queue)` runs at most once per window per queue, never later than `maxMs` after
 * the notification it answers, and never after `close()`. A notification only ever hastens a
 * fetch: jobs whose wake is skipped or coalesced are still found by the next wake or the polling
 * interval.
 */
export class WakeCoalescer {
  readonly #wake: (queue: string) => boolean;
  readonly #window: WakeWindow;
  readonly #queues = new Map<string, QueueState>();
  #closed = false;

  readonly #running: (queue: string) => boolean;

  /**
   * `wake` makes one idle slot of the queue fetch now and says whether there was one; `running`
   * says whether a job of the queue runs in this process.
   */
  constructor(wake: (queue: string) => boolean, running: (queue: string) => boolean, window: WakeWindow) {
    this.#wake = wake;
    this.#running = running;
    this.#window = window;
  }

  /** A job became ready on `queue` (a NOTIFY from any process). */
  notified(queue: string): void {
    if (this.#closed) return;
    const state = this.#state(queue);
    const now = Date.now();
    // Measured from the previous notification, not the previous wake: a loser that stopped waking
    // must not rejoin every maxMs while the stream it loses goes on.
    const quiet = now - state.notifiedAt > this.#window.maxMs;
    state.notifiedAt = now;
    if (state.timer !== undefined) return;
    const losing = state.foundAt < state.wokeAt;
    const running = this.#running(queue);
    if (quiet) state.windowMs = this.#window.minMs;
    else if (losing && (running || state.windowMs >= this.#window.maxMs)) return;
    else if (running) state.windowMs = this.#window.maxMs;
    else if (!losing) state.windowMs = this.#window.minMs;
    else state.windowMs = Math.min(this.#window.maxMs, Math.max(1, state.windowMs) * 2);
    state.timer = setTimeout(() => {
      state.timer = undefined;
      // A wake with every slot busy fetches nothing, so it says nothing about other processes.
      if (this.#wake(queue)) state.wokeAt = Date.now();
    }, state.windowMs);
    state.timer.unref();
  }

  /** A fetch of this process returned jobs of `queue`: its next NOTIFY reacts after `minMs`. */
  found(queue: string): void {
    this.#state(queue).foundAt = Date.now();
  }

  /** Cancels every pending wake; later notifications are ignored. */
  close(): void {
    this.#closed = true;
    for (const state of this.#queues.values()) clearTimeout(state.timer);
    this.#queues.clear();
  }

  #state(queue: string): QueueState {
    let state = this.#queues.get(queue);
    if (state === undefined) {
      state = { windowMs: this.#window.minMs, wokeAt: 0, notifiedAt: 0, foundAt: 0, timer: undefined };
      this.#queues.set(queue, state);
    }
    return state;
  }
}
