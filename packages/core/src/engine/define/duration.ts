import { CairnError } from '../../errors/cairn-error.js';

/** A unit a duration string may end with: milliseconds, seconds, minutes, hours, days. */
export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';

/**
 * A duration: milliseconds as a number, or a number followed by a unit, such as `'250ms'`, `'5s'`,
 * `'10m'`, `'1.5h'`, `'30d'`. A string such as `'10 minutes'` or `'5'` does not compile; at run
 * time every value is checked again (`toMilliseconds`): it must lie between 0 and
 * `MAX_DURATION_MS` (100 years), otherwise the call throws `INVALID_INPUT`.
 */
export type Duration = number | `${number}${DurationUnit}`;

const UNIT_MS: Readonly<Record<DurationUnit, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * The longest duration Cairn accepts: 100 years of 365.25 days (3 155 760 000 000 ms, `'36525d'`).
 * Every wake time, timeout and delay the engine stores is at most this far ahead of the clock, so
 * it is a whole number of milliseconds well inside what every backend holds exactly (PostgreSQL
 * and MariaDB `bigint`, SQLite integers, Redis and MongoDB doubles: 2^53) and inside the range of
 * a JavaScript `Date`.
 */
export const MAX_DURATION_MS = 100 * 365.25 * UNIT_MS.d;

// The largest |epoch ms| a JavaScript Date can hold (±8.64e15, about 275 760 years).
const MAX_DATE_MS = 8.64e15;

// A non-negative decimal number as TypeScript's `${number}` accepts it (exponent allowed), then a
// unit. No sign, no blanks, no hex: `-5s` compiles but is refused here like `-5000`.
const DURATION_STRING = /^((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(ms|s|m|h|d)$/;

/** How a refused value is named in a message: numbers as JavaScript prints them, strings quoted. */
function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (value === null || value === undefined) return String(value);
  try {
    return `${typeof value} ${JSON.stringify(value) ?? String(value)}`;
  } catch {
    return typeof value;
  }
}

// `data.value` must survive the JSON round trip of an error record: NaN and ±Infinity would become
// null, so non-finite numbers (and non-primitives) are carried as their description.
function invalid(what: string, value: unknown, rule: string): CairnError {
  const shown = describe(value);
  return new CairnError('INVALID_INPUT', `Invalid ${what}: ${shown} (${rule})`, {
    data: { what, value: (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'string' ? value : shown },
  });
}

const DURATION_RULE = "a duration is milliseconds or a string such as '250ms', '5s', '10m', '2h', '30d', from 0 up to 100 years";

/**
 * Converts a `Duration` to whole milliseconds, rounding a fraction up (a wait is never shorter than
 * asked). Throws `CairnError('INVALID_INPUT')` naming `what` and the value for anything negative,
 * NaN, infinite, longer than `MAX_DURATION_MS`, malformed (`'10 minutes'`, `''`, `'5'`) or not a
 * number or string, so a typo never becomes a zero-length, endless or unstorable wait.
 */
export function toMilliseconds(duration: Duration, what = 'duration'): number {
  let ms = Number.NaN;
  if (typeof duration === 'number') {
    ms = duration;
  } else if (typeof duration === 'string') {
    const match = DURATION_STRING.exec(duration);
    if (match) ms = Number(match[1]) * UNIT_MS[match[2] as DurationUnit];
  }
  if (!(ms >= 0 && ms <= MAX_DURATION_MS)) throw invalid(what, duration, DURATION_RULE);
  return Math.ceil(ms);
}

/**
 * Checks a number of milliseconds given as an option (engine timings, intervals): a number from
 * `min` (default 0) up to `MAX_DURATION_MS`, or `Infinity` when `allowInfinity`. Returns it rounded
 * up to a whole millisecond; throws `CairnError('INVALID_INPUT')` naming `what` otherwise.
 */
export function checkMilliseconds(value: unknown, what: string, options: { min?: number; allowInfinity?: boolean } = {}): number {
  const min = options.min ?? 0;
  if (typeof value === 'number' && value === Number.POSITIVE_INFINITY && options.allowInfinity) return value;
  if (typeof value !== 'number' || !(value >= min && value <= MAX_DURATION_MS)) {
    throw invalid(what, value, `milliseconds from ${min} up to ${MAX_DURATION_MS} (100 years)${options.allowInfinity ? ', or Infinity' : ''}`);
  }
  return Math.ceil(value);
}

/**
 * Checks a wake time (`ctx.sleepUntil`): a `Date` or epoch milliseconds, valid as a `Date`, and no
 * more than `MAX_DURATION_MS` after `now`. A time already past is valid (the wait ends at once).
 * Returns whole epoch milliseconds, rounded up; throws `CairnError('INVALID_INPUT')` naming `what`
 * and the value otherwise.
 */
export function checkWakeTime(at: Date | number, now: number, what = 'wake time'): number {
  const ms = at instanceof Date ? at.getTime() : at;
  if (typeof ms !== 'number' || !(Math.abs(ms) <= MAX_DATE_MS)) {
    throw invalid(what, at, 'a wake time is a valid Date or epoch milliseconds');
  }
  if (ms > now + MAX_DURATION_MS) {
    throw invalid(what, at, 'a wake time is at most 100 years ahead');
  }
  return Math.ceil(ms);
}
