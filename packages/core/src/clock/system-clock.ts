import type { Clock } from './clock.js';
import { MAX_TIMER_MS, sleepInSlices, timerInSlices } from './timer-slices.js';
import { TimerQueue } from './timer-queue.js';

// The pending `setTimer`s of the process's system clock.
const timers = new TimerQueue();

/**
 * Wall-clock time. `sleep` honours any duration in full, also beyond the 2^31-1 ms (24.8 days) a
 * single Node.js timer holds: it waits in slices (`sleepInSlices`).
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleepInSlices(ms, signal),
  // Delays a single Node.js timer holds share one (see `TimerQueue`); longer ones wait in slices.
  setTimer: (ms, fire) => (ms > MAX_TIMER_MS ? timerInSlices(ms, fire) : timers.add(ms, fire)),
};
