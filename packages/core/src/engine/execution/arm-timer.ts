import type { Clock } from '../../clock/clock.js';

/** Why a fallback timer's sleep is cancelled: nobody sees it (the rejection is swallowed). */
const TIMER_CANCELLED = Symbol('timer cancelled');

/**
 * Calls `fire` once after `ms` of `clock`'s time unless the returned function is called first:
 * through `clock.setTimer` when the clock has it (no promise, signal or event per timer), else
 * through `clock.sleep` with an AbortSignal, as any clock can.
 */
export function armTimer(clock: Clock, ms: number, fire: () => void): () => void {
  if (clock.setTimer !== undefined) return clock.setTimer(ms, fire);
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(fire, () => {});
  // A shared reason: `abort()` without one builds a DOMException (with its stack) per timer.
  return () => controller.abort(TIMER_CANCELLED);
}
