/** Time as the engine sees it. Tests swap in `ManualClock` to drive timers without waiting. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds of this clock's time; rejects with the signal's reason when
   * `signal` aborts first.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
