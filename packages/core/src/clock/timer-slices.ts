/**
 * The longest delay a Node.js timer holds: 2^31-1 ms (about 24.8 days). `setTimeout` with anything
 * longer (or not a number) fires after 1 ms instead, with only a warning.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits `ms` milliseconds of real time with `setTimeout`, in slices of at most `MAX_TIMER_MS`, so
 * any delay (up to `Infinity`, which never resolves) is honoured in full and never cut short.
 * Rejects with `signal.reason` as soon as `signal` aborts (at once when it already has); the
 * pending timer is cleared. Zero, negative and NaN resolve on the next timer turn. `maxSlice`
 * (default and upper bound `MAX_TIMER_MS`) is the longest single timer; tests lower it to watch the
 * slicing at work.
 */
export function sleepInSlices(ms: number, signal?: AbortSignal, maxSlice: number = MAX_TIMER_MS): Promise<void> {
  const limit = maxSlice >= 1 && maxSlice <= MAX_TIMER_MS ? maxSlice : MAX_TIMER_MS;
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    // biome-ignore lint/complexity/useMathMinMax: a NaN duration must sleep 0 ms, where Math.max would keep the NaN
    let left = ms > 0 ? ms : 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const arm = (): void => {
      const slice = Math.min(left, limit);
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

/**
 * `fire` once after `ms` milliseconds of real time, in slices of at most `MAX_TIMER_MS` as
 * `sleepInSlices` waits, unless the returned function is called first (later calls do nothing).
 * Zero, negative and NaN fire on the next timer turn; `Infinity` never fires. No promise, signal or
 * event is made: this is the timer the engine arms and cancels around each inline step body.
 */
export function timerInSlices(ms: number, fire: () => void, maxSlice: number = MAX_TIMER_MS): () => void {
  const limit = maxSlice >= 1 && maxSlice <= MAX_TIMER_MS ? maxSlice : MAX_TIMER_MS;
  if (!(ms > limit)) {
    // One slice (the usual case): one timer, no bookkeeping.
    // biome-ignore lint/complexity/useMathMinMax: a NaN duration must fire on the next turn, where Math.max would keep the NaN
    const single = setTimeout(fire, ms > 0 ? ms : 0);
    return () => clearTimeout(single);
  }
  let left = ms;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    const slice = Math.min(left, limit);
    left -= slice;
    timer = setTimeout(() => {
      timer = undefined;
      if (left > 0) arm();
      else fire();
    }, slice);
  };
  arm();
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    left = 0;
  };
}
