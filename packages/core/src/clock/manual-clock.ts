import { CairnError } from '../errors/cairn-error.js';
import type { Clock } from './clock.js';

/** Options of `new ManualClock()`. */
export interface ManualClockOptions {
  /** The initial time, epoch milliseconds or a `Date`. Default 2025-01-01T00:00:00.000Z. */
  start?: number | Date;
}

/** Options of `ManualClock.runAll()`. */
export interface RunAllOptions {
  /**
   * Most timers to fire before giving up with an error. A loop that re-arms a timer every time it
   * wakes (a poller) would otherwise never let `runAll` return. Default 10 000.
   */
  maxTimers?: number;
}

interface Sleeper {
  deadline: number;
  /** Creation order: breaks ties between equal deadlines so they fire first-come first-served. */
  seq: number;
  settled: boolean;
  fire(): void;
}

const DEFAULT_START = Date.UTC(2025, 0, 1);

// One full macrotask turn: every microtask queued so far (and those they queue) runs first, so code
// woken by a timer gets to react — and arm its own timers — before the clock moves on.
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function checkDuration(ms: number, what: string): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new CairnError('INVALID_INPUT', `${what} must be a finite, non-negative number of milliseconds, got ${String(ms)}`, {
      data: { what, value: String(ms) },
    });
  }
}

/**
 * A clock that only moves when a test moves it, so sleeps, leases, retries and delayed jobs run
 * without real waiting and in a reproducible order.
 *
 * Time changes only through `advance`, `set`, `advanceToNextTimer` and `runAll`. A `sleep` resolves
 * only when one of those moves the clock to or past its deadline. Advancing fires due sleepers one
 * at a time in deadline order (ties in creation order), letting the event loop run a full turn after
 * each, and `now()` reads the firing sleeper's deadline while its waiter runs. Sleeps armed during an
 * advance whose deadline falls inside the advanced window fire within the same advance. Concurrent
 * calls that move time are serialised in call order.
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  // Binary min-heap ordered by (deadline, seq). Aborted sleepers stay in it, flagged `settled`, and
  // are discarded when they reach the top: removal from the middle of a heap is not worth the code.
  #heap: Sleeper[] = [];
  #live = 0;
  // Tail of the chain that serialises advance/set/runAll, so two un-awaited advances add up instead
  // of interleaving their firings.
  #moving: Promise<unknown> = Promise.resolve();

  /** Starts at `options.start` (default 2025-01-01T00:00:00.000Z). */
  constructor(options: ManualClockOptions = {}) {
    const start = options.start instanceof Date ? options.start.getTime() : (options.start ?? DEFAULT_START);
    if (!Number.isFinite(start)) throw new CairnError('INVALID_INPUT', `ManualClock start must be a finite time, got ${String(start)}`);
    this.#now = start;
  }

  /** The current time in epoch milliseconds; changes only when the clock is moved. */
  now(): number {
    return this.#now;
  }

  /**
   * Resolves once the clock has been moved `ms` milliseconds past the current time; rejects with
   * `signal.reason` as soon as `signal` aborts (at once when it already has), and the sleeper is then
   * no longer pending. A duration of 0 (or less) resolves on the next microtask without waiting for
   * an advance, like a timer that is already due; `Infinity` never fires. Any finite duration is
   * held exactly, however long (there is no real timer behind it, so no 2^31-1 ms limit). `NaN` is
   * refused with `CairnError('INVALID_INPUT')`.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      if (typeof ms !== 'number' || Number.isNaN(ms)) {
        return reject(
          new CairnError('INVALID_INPUT', `sleep duration must be a number of milliseconds, got ${String(ms)}`, {
            data: { what: 'sleep duration', value: String(ms) },
          }),
        );
      }
      // Already due: code such as `sleep(wakeAt - now())` must not hang waiting for a test to
      // advance a clock that has nothing left to wait for.
      if (ms <= 0) return resolve();
      const onAbort = (): void => {
        if (sleeper.settled) return;
        sleeper.settled = true;
        this.#live--;
        reject(signal?.reason);
      };
      const sleeper: Sleeper = {
        deadline: this.#now + ms,
        seq: this.#seq++,
        settled: false,
        fire: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#push(sleeper);
      this.#live++;
    });
  }

  /**
   * Calls `fire` once the clock has been moved `ms` milliseconds past the current time, exactly
   * when a `sleep(ms)` armed now would resolve (same order among equal deadlines, counted in
   * `pendingTimers` until it fires or is cancelled), unless the returned function is called first.
   * A duration of 0 (or less) fires on the next microtask; `Infinity` never fires. `NaN` is refused
   * with `CairnError('INVALID_INPUT')`.
   */
  setTimer(ms: number, fire: () => void): () => void {
    if (typeof ms !== 'number' || Number.isNaN(ms)) {
      throw new CairnError('INVALID_INPUT', `timer duration must be a number of milliseconds, got ${String(ms)}`, {
        data: { what: 'timer duration', value: String(ms) },
      });
    }
    if (ms <= 0) {
      let cancelled = false;
      queueMicrotask(() => {
        if (!cancelled) fire();
      });
      return () => {
        cancelled = true;
      };
    }
    const sleeper: Sleeper = { deadline: this.#now + ms, seq: this.#seq++, settled: false, fire };
    this.#push(sleeper);
    this.#live++;
    return () => {
      if (sleeper.settled) return;
      sleeper.settled = true;
      this.#live--;
    };
  }

  /** How many sleeps are waiting to fire (aborted and fired ones are not counted). */
  get pendingTimers(): number {
    return this.#live;
  }

  /**
   * Moves the clock forward by `ms`, firing every sleeper whose deadline falls within the window —
   * including ones armed by woken code while advancing — in deadline order, with a full event-loop
   * turn after each so woken code runs before later timers fire. Resolves once the clock reads the
   * starting time plus `ms` and nothing else in the window is due. Throws
   * `CairnError('INVALID_INPUT')` for a negative or non-finite duration.
   */
  async advance(ms: number): Promise<void> {
    checkDuration(ms, 'advance duration');
    // The target is read when this move's turn comes, so queued advances add up.
    return this.#serialise(() => this.#runUntil(this.#now + ms));
  }

  /**
   * Sets the clock to `epochMs`. Moving forward behaves as `advance(epochMs - now())`. Moving back
   * fires nothing: sleepers keep their absolute deadlines, so they now have longer to wait.
   */
  async set(epochMs: number | Date): Promise<void> {
    const target = epochMs instanceof Date ? epochMs.getTime() : epochMs;
    if (typeof target !== 'number' || !Number.isFinite(target)) {
      throw new CairnError('INVALID_INPUT', `ManualClock.set needs a finite time, got ${String(target)}`);
    }
    return this.#serialise(async () => {
      if (target <= this.#now) {
        this.#now = target;
        return;
      }
      await this.#runUntil(target);
    });
  }

  /**
   * Moves the clock to the earliest pending deadline and fires everything due at that instant
   * (including sleeps of 0 armed by the woken code). Resolves `false`, without moving time, when no
   * finite timer is pending.
   */
  advanceToNextTimer(): Promise<boolean> {
    return this.#serialise(async () => {
      const next = this.#peek();
      if (next === undefined || next.deadline === Infinity) {
        await settle();
        return false;
      }
      await this.#runUntil(Math.max(this.#now, next.deadline));
      return true;
    });
  }

  /**
   * Advances timer by timer until no finite timer is pending, including timers armed by the code
   * the firings wake. Throws `CairnError('INVALID_INPUT')` after `options.maxTimers` firings (default
   * 10 000), which signals a loop that re-arms itself forever; the clock stays where it got to.
   */
  runAll(options: RunAllOptions = {}): Promise<void> {
    const maxTimers = options.maxTimers ?? 10_000;
    return this.#serialise(async () => {
      await settle();
      for (let fired = 0; ; fired++) {
        const next = this.#peek();
        if (next === undefined || next.deadline === Infinity) return;
        if (fired >= maxTimers) {
          throw new CairnError('INVALID_INPUT', `ManualClock.runAll fired ${maxTimers} timers and more are still pending`, {
            data: { maxTimers, pendingTimers: this.#live },
          });
        }
        this.#fire(next);
        await settle();
      }
    });
  }

  #serialise<T>(move: () => Promise<T>): Promise<T> {
    const result = this.#moving.then(move);
    // Keep the chain alive after a failure, so one failed move does not wedge the clock.
    this.#moving = result.catch(() => undefined);
    return result;
  }

  async #runUntil(target: number): Promise<void> {
    // Let code that was about to arm a timer (the caller's un-awaited work) do so first.
    await settle();
    for (;;) {
      const next = this.#peek();
      if (next === undefined || next.deadline > target) break;
      this.#fire(next);
      await settle();
    }
    if (target > this.#now) this.#now = target;
  }

  #fire(sleeper: Sleeper): void {
    this.#pop();
    // Time never runs backwards during an advance: a sleeper left behind by `set` to an earlier
    // time fires at the current time.
    if (sleeper.deadline > this.#now) this.#now = sleeper.deadline;
    sleeper.settled = true;
    this.#live--;
    sleeper.fire();
  }

  // The earliest live sleeper, discarding aborted ones on the way.
  #peek(): Sleeper | undefined {
    for (;;) {
      const top = this.#heap[0];
      if (top === undefined || !top.settled) return top;
      this.#pop();
    }
  }

  #push(sleeper: Sleeper): void {
    const heap = this.#heap;
    heap.push(sleeper);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}

function before(a: Sleeper, b: Sleeper): boolean {
  return a.deadline < b.deadline || (a.deadline === b.deadline && a.seq < b.seq);
}
