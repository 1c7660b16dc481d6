import { CairnError } from '../errors/cairn-error.js';

/** A duration: milliseconds as a number, or a string such as `'250ms'`, `'5s'`, `'10m'`, `'2h'`, `'1d'`. */
export type Duration = number | string;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Converts a `Duration` to milliseconds. Throws `INVALID_DURATION` for negative, non-finite or
 * unparseable values, so a typo never becomes a zero-length (or endless) wait.
 */
export function toMilliseconds(duration: Duration, what = 'duration'): number {
  if (typeof duration === 'number') {
    if (Number.isFinite(duration) && duration >= 0) return duration;
  } else if (typeof duration === 'string') {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(duration);
    if (match) return Math.round(Number(match[1]) * (UNIT_MS[match[2] as string] as number));
  }
  throw new CairnError('INVALID_DURATION', `Invalid ${what}: ${JSON.stringify(duration)} (use milliseconds or e.g. '5s', '10m', '2h')`, {
    data: { what, value: typeof duration === 'string' || typeof duration === 'number' ? duration : String(duration) },
  });
}
