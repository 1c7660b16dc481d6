// The system clock's `setTimer`: one Node.js timer shared by every pending timer, for the timer
// the engine arms around each inline step body and almost always cancels (decision 39). A
// `setTimeout` plus a `clearTimeout` per step was about a tenth of an inline step's CPU on the
// memory store (issue 18); here a cancel costs a flag and arming the next step's timer costs an
// array push, and the one Node.js timer is re-armed only when it fires or an earlier one arrives.
import { performance } from 'node:perf_hooks';

interface Entry {
  /** When it is due, on `performance.now()`'s scale. */
  readonly due: number;
  /** Cleared when the timer fires or is cancelled (so a cancelled entry holds nothing). */
  fire: (() => void) | undefined;
}

/**
 * Timers on one shared Node.js timer: `add(ms, fire)` calls `fire` once, `ms` milliseconds later
 * as Node.js timers count time (zero, negative and NaN fire on a later timer turn; timers mocked
 * in a test drive it as they drive `setTimeout`), unless the returned cancel was called first; timers fire in order of their due time. The
 * shared timer keeps the process alive exactly while some timer is pending (it is unref'd when
 * none is), as one `setTimeout` per timer would. `ms` must be at most 2^31-1 (a single Node.js
 * timer's limit); longer delays go through `timerInSlices`.
 */
export class TimerQueue {
  // Sorted by due time; entries before `head` are gone (fired or skipped as cancelled).
  private entries: Entry[] = [];
  private head = 0;
  private pending = 0;
  private handle: ReturnType<typeof setTimeout> | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  // Made once: the shared timer's callback.
  private readonly onTimer = (): void => this.fireDue();

  /** Calls `fire` once after `ms` unless the returned function is called first (later calls do nothing). */
  add(ms: number, fire: () => void): () => void {
    // A cancelled timer at the head is dropped now, so a run of arm-and-cancel keeps the list short.
    this.dropCancelled();
    // biome-ignore lint/complexity/useMathMinMax: a NaN delay must fire on the next turn, where Math.max would keep the NaN
    const due = performance.now() + (ms > 0 ? ms : 0);
    const entry: Entry = { due, fire };
    let at = this.entries.length;
    // Timers of one delay arrive in due order: the usual insert is an append.
    while (at > this.head && (this.entries[at - 1] as Entry).due > due) at -= 1;
    if (at === this.entries.length) this.entries.push(entry);
    else this.entries.splice(at, 0, entry);
    this.pending += 1;
    if (due < this.armedFor) this.arm(due);
    else if (this.pending === 1) this.handle?.ref();
    return () => {
      if (entry.fire === undefined) return;
      entry.fire = undefined;
      this.pending -= 1;
      // Nothing pending: the armed timer must not keep the process alive.
      if (this.pending === 0) this.handle?.unref();
    };
  }

  /** Arms the Node.js timer for `due`, counting from `from` (default: now). */
  private arm(due: number, from: number = performance.now()): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.armedFor = due;
    this.handle = setTimeout(this.onTimer, Math.max(0, due - from));
    if (this.pending === 0) this.handle.unref();
  }

  private dropCancelled(): void {
    while (this.head < this.entries.length && (this.entries[this.head] as Entry).fire === undefined) this.head += 1;
    if (this.head === this.entries.length) {
      this.entries = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  private fireDue(): void {
    // The Node.js timer fired, so the time it was armed for has come by the timers' own clock,
    // even if `performance.now()` lags it (a loop-time rounding, or timers mocked in a test).
    const now = Math.max(performance.now(), this.armedFor);
    this.handle = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const due: (() => void)[] = [];
    while (this.head < this.entries.length && (this.entries[this.head] as Entry).due <= now) {
      const entry = this.entries[this.head] as Entry;
      this.head += 1;
      if (entry.fire === undefined) continue;
      due.push(entry.fire);
      entry.fire = undefined;
      this.pending -= 1;
    }
    this.dropCancelled();
    // Armed before the callbacks run, so a timer one of them adds finds the list consistent.
    const next = this.entries[this.head];
    if (next !== undefined) this.arm(next.due, now);
    for (const fire of due) {
      try {
        fire();
      } catch (error) {
        // As with one Node.js timer per callback: the error is uncaught, the other timers still fire.
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }
}
