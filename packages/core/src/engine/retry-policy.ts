import { CairnError } from '../errors/cairn-error.js';
import { type Duration, toMilliseconds } from './duration.js';

/**
 * The default cap of exponential backoff: 1 hour. Without one, `delay * factor^(attempt-1)` grows
 * past any storable wake time within a few dozen attempts (2^60 s is longer than the universe).
 */
export const DEFAULT_MAX_BACKOFF_MS = 3_600_000;

/** How long to wait between attempts. */
export interface BackoffOptions {
  /** `fixed`: always `delay`; `exponential`: `delay * factor^(attempt-1)`, capped by `maxDelay`. */
  type: 'fixed' | 'exponential';
  /** The first wait (every wait, for `fixed`): 0 up to 100 years. */
  delay: Duration;
  /**
   * Cap for exponential growth, 0 up to 100 years. Default `DEFAULT_MAX_BACKOFF_MS` (1 hour), or
   * `delay` itself when that is longer: a step retried many times never waits beyond it.
   */
  maxDelay?: Duration;
  /** Growth factor for `exponential` (default 2). */
  factor?: number;
}

/** A step's resolved retry policy, fixed when the step is first recorded. */
export interface RetryPolicy {
  maxAttempts: number;
  /** Milliseconds to wait after failed attempt `attempt` (1-based). */
  delayAfter(attempt: number): number;
}

/**
 * Resolves `retries` (extra attempts after the first) and `backoff` into a policy whose every wait
 * is a whole number of milliseconds from 0 up to the cap. Throws `INVALID_INPUT` naming the field
 * on bad values (see `toMilliseconds` for durations).
 */
export function resolveRetryPolicy(retries: number | undefined, backoff: BackoffOptions | undefined): RetryPolicy {
  const extra = retries ?? 0;
  if (!Number.isInteger(extra) || extra < 0 || extra > 10_000) {
    throw new CairnError('INVALID_INPUT', `retries must be an integer in 0..10000, got ${String(retries)}`);
  }
  const base = backoff === undefined ? 1000 : toMilliseconds(backoff.delay, 'backoff.delay');
  const cap = backoff?.maxDelay === undefined ? Math.max(DEFAULT_MAX_BACKOFF_MS, base) : toMilliseconds(backoff.maxDelay, 'backoff.maxDelay');
  const factor = backoff?.factor ?? 2;
  if (!Number.isFinite(factor) || factor < 1) throw new CairnError('INVALID_INPUT', `backoff.factor must be a finite number >= 1, got ${String(factor)}`);
  const exponential = backoff?.type === 'exponential';
  if (backoff !== undefined && backoff.type !== 'fixed' && backoff.type !== 'exponential') {
    throw new CairnError('INVALID_INPUT', `backoff.type must be 'fixed' or 'exponential'`);
  }
  return {
    maxAttempts: extra + 1,
    // `factor ** n` may reach Infinity (and 0 * Infinity is NaN): the cap is applied to the growth
    // itself, so the wait is always a finite whole number within [0, cap].
    delayAfter: (attempt) => {
      if (!exponential || base === 0) return Math.min(cap, base);
      const growth = factor ** Math.max(0, attempt - 1);
      return growth >= cap / base ? cap : Math.min(cap, Math.ceil(base * growth));
    },
  };
}
