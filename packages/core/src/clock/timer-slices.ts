/**
 * The longest delay a Node.js timer holds: 2^31-1 ms (about 24.8 days). `setTimeout` with anything
 * longer (or not a number) fires after 1 ms instead, with only a warning.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits `ms` milliseconds of real time with `setTimeout`, in slices of at most `MAX_TIMER_MS`, so
 * any delay (up to `Infinity`, which never resolves) is honoured in full and never cut short.
 * Rejects with `signal.reason` as soon as `signal` aborts (at once when it already has); the
 * pending timer is cleared. Zero, negative and NaN resolve on the next timer turn.
 */
export function sleepInSlices(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    let left = ms > 0 ? ms : 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const arm = (): void => {
      const slice = Math.min(left, MAX_TIMER_MS);
      left -= slice;
      timer = setTimeout(() => {
        if (left > 0) return arm();
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, slice);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    arm();
  });
}
