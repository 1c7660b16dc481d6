import type { Clock } from './clock.js';
import { sleepInSlices, timerInSlices } from './timer-slices.js';

/**
 * Wall-clock time. `sleep` honours any duration in full, also beyond the 2^31-1 ms (24.8 days) a
 * single Node.js timer holds: it waits in slices (`sleepInSlices`).
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleepInSlices(ms, signal),
  setTimer: (ms, fire) => timerInSlices(ms, fire),
};
