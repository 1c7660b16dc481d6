// A bounded wait on any clock, for `engine.stop()`'s grace periods; apart so the engine's
// assembly does not carry timer plumbing.
import type { Clock } from '../clock/clock.js';

/**
 * True when `work` settles (fulfilled or rejected) within `ms` measured on `clock`; false when the
 * time runs out first. `Infinity` waits for as long as it takes. Leaves no timer armed.
 */
export async function settlesWithin(clock: Clock, work: Promise<unknown>, ms: number): Promise<boolean> {
  if (ms === Infinity) {
    await work.catch(() => undefined);
    return true;
  }
  const timer = new AbortController();
  const done = work.then(
    () => true,
    () => true,
  );
  const timeout = clock.sleep(ms, timer.signal).then(
    () => false,
    () => true,
  );
  try {
    return await Promise.race([done, timeout]);
  } finally {
    timer.abort();
  }
}
