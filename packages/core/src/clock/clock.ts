/** Time as the engine sees it. Tests swap in `ManualClock` to drive timers without waiting. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds of this clock's time; rejects with the signal's reason when
   * `signal` aborts first. Must honour every `ms` in full, however long: the engine sleeps up to
   * 100 years (`MAX_DURATION_MS`) through it, well past the 2^31-1 ms a single Node.js timer holds,
   * so a clock built on `setTimeout` has to wait in slices (see `sleepInSlices`).
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Optional, a cheaper `sleep` for a timer that is usually cancelled: calls `fire` once, after
   * `ms` milliseconds of this clock's time, unless the returned function was called first (calling
   * it later does nothing). Same durations as `sleep` (any length honoured in full; zero or less
   * fires without waiting, on a later tick). The engine arms one per inline step whose body runs
   * before it is recorded, and cancels it when the body ends; a clock without it gets a `sleep`
   * with an `AbortSignal` instead, which costs an AbortController and an abort event per step.
   */
  setTimer?(ms: number, fire: () => void): () => void;
}
