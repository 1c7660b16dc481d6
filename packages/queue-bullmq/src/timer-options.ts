import { CairnError } from '@cairn/core';
import { MAX_TIMER_MS } from '@cairn/core/backend';

/**
 * Checks an option BullMQ arms a Node.js timer with (`lockDurationMs`, `stalledIntervalMs`): an
 * integer from 1 up to `MAX_TIMER_MS` (2^31-1 ms, about 24.8 days). A longer timer would fire after
 * 1 ms instead, turning a lock renewal or stalled check into a busy loop. Returns `fallback` when
 * `value` is undefined; throws `CairnError('INVALID_INPUT')` naming the option otherwise.
 */
export function checkTimerOption(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMER_MS) {
    throw new CairnError(
      'INVALID_INPUT',
      `${what} must be an integer number of milliseconds from 1 to ${MAX_TIMER_MS} (a Node.js timer's limit), got ${String(value)}`,
      {
        data: { what, value: String(value) },
      },
    );
  }
  return value;
}
