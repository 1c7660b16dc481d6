import { CairnError } from '../errors/cairn-error.js';
import { type Duration, toMilliseconds } from './duration.js';

/** How long to wait between attempts. */
export interface BackoffOptions {
  /** `fixed`: always `delay`; `exponential`: `delay * factor^(attempt-1)`, capped by `maxDelay`. */
  type: 'fixed' | 'exponential';
  delay: Duration;
  /** Cap for exponential growth (default: none). */
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
 * Resolves `retries` (extra attempts after the first) and `backoff` into a policy. Throws
 * `INVALID_INPUT` / `INVALID_DURATION` on bad values.
 */
export function resolveRetryPolicy(retries: number | undefined, backoff: BackoffOptions | undefined): RetryPolicy {
  const extra = retries ?? 0;
  if (!Number.isInteger(extra) || extra < 0 || extra > 10_000) {
    throw new CairnError('INVALID_INPUT', `retries must be an integer in 0..10000, got ${String(retries)}`);
  }
  const base = backoff === undefined ? 1000 : toMilliseconds(backoff.delay, 'backoff.delay');
  const cap = backoff?.maxDelay === undefined ? Number.POSITIVE_INFINITY : toMilliseconds(backoff.maxDelay, 'backoff.maxDelay');
  const factor = backoff?.factor ?? 2;
  if (!Number.isFinite(factor) || factor < 1) throw new CairnError('INVALID_INPUT', `backoff.factor must be >= 1, got ${factor}`);
  const exponential = backoff?.type === 'exponential';
  if (backoff !== undefined && backoff.type !== 'fixed' && backoff.type !== 'exponential') {
    throw new CairnError('INVALID_INPUT', `backoff.type must be 'fixed' or 'exponential'`);
  }
  return {
    maxAttempts: extra + 1,
    delayAfter: (attempt) => Math.min(cap, exponential ? base * factor ** Math.max(0, attempt - 1) : base),
  };
}
