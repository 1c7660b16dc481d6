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
}
