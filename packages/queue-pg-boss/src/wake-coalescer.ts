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
  /** When a fetch of this process last returned a job of the queue (0: never). */
  foundAt: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Turns a stream of "a job is ready on queue Q" notifications into at most one wake-up per queue
 * per window in this process. Every process receives every NOTIFY, but only one of them gets each
 * job: a process whose last wake found nothing (another process took the job) doubles its window
 * up to `maxMs`, so N idle processes make about N fetches per window instead of N per job; a wake
 * that found a job, or a NOTIFY after a quiet spell longer than `maxMs`, reacts after `minMs`. A
 * process with a job of the queue running waits `maxMs`: the slot that finishes it fetches again
 * at once, so it takes its share of a backlog without being woken.
 *
 * Guarantees: `wake(queue)` runs at most once per window per queue, and never later than `maxMs`
 * after a notification (never after `close()`). A notification only ever hastens a fetch: jobs
 * whose wake is skipped or coalesced are still found by the next wake or the polling interval.
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
    if (state.timer !== undefined) return;
    const now = Date.now();
    if (this.#running(queue)) state.windowMs = this.#window.maxMs;
    else if (now - state.wokeAt > this.#window.maxMs || state.foundAt >= state.wokeAt) state.windowMs = this.#window.minMs;
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
      state = { windowMs: this.#window.minMs, wokeAt: 0, foundAt: 0, timer: undefined };
      this.#queues.set(queue, state);
    }
    return state;
  }
}
