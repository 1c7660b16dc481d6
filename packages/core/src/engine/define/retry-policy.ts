import { CairnError } from '../../errors/cairn-error.js';
import { fromErrorRecord, toErrorRecord } from '../../errors/error-record-codec.js';
import { isNonRetryable, retryAfterOf } from '../../errors/retry-errors.js';
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

/**
 * Decides, for the error an attempt failed with, whether another attempt may be made. Called only
 * when attempts are left and the error is not non-retryable (`NonRetryableError`). It receives
 * the error as thrown (a thrown non-`Error` value arrives wrapped in an `Error` with its text). A
 * predicate that throws counts as `false`: the step fails with the attempt's own error.
 */
export type RetryPredicate = (error: Error) => boolean;

/**
 * A retry policy as options: of a step (`ctx.step(name, fn, { retries, backoff, retryIf })`), or
 * the engine-wide default (`createEngine({ defaultRetry })`) that fills each option a step leaves out.
 */
export interface RetryOptions {
  /** Extra attempts after the first, 0..10000 (default 0). */
  retries?: number;
  /** Wait between attempts (default fixed 1 s). */
  backoff?: BackoffOptions;
  /** Whether an error may be retried (default: every error but a non-retryable one). */
  retryIf?: RetryPredicate;
}

/** A step's resolved retry policy; its attempt budget is fixed when the step is first recorded. */
export interface RetryPolicy {
  maxAttempts: number;
  /** Milliseconds to wait after failed attempt `attempt` (1-based). */
  delayAfter(attempt: number): number;
  /** The step's `retryIf`, if any. */
  retryIf?: RetryPredicate;
}

/**
 * What follows a failed attempt: another one after `delayMs`, or none. `error`, when set, is what
 * the step fails with instead of the attempt's error (an invalid `retryAfter`).
 */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; error?: CairnError };

/**
 * The one retry decision, shared by inline steps and queued step workers so both make exactly the
 * same attempts: none after the last attempt (`maxAttempts`, as recorded with the step), none for
 * a non-retryable error or one `retryIf` refuses; otherwise the next attempt waits what the error
 * asked (`retryAfter`, checked like every duration) or the backoff.
 */
export function decideRetry(policy: RetryPolicy, error: unknown, attempt: number, maxAttempts: number): RetryDecision {
  if (attempt >= maxAttempts || isNonRetryable(error)) return { retry: false };
  if (policy.retryIf !== undefined) {
    let retry: boolean;
    try {
      retry = policy.retryIf(error instanceof Error ? error : fromErrorRecord(toErrorRecord(error))) === true;
    } catch {
      retry = false;
    }
    if (!retry) return { retry: false };
  }
  const asked = retryAfterOf(error);
  if (asked === undefined) return { retry: true, delayMs: policy.delayAfter(attempt) };
  try {
    return { retry: true, delayMs: toMilliseconds(asked as Duration, 'retryAfter') };
  } catch (invalid) {
    const cause = invalid as CairnError;
    return { retry: false, error: new CairnError('INVALID_INPUT', cause.message, { cause: error, ...(cause.data === undefined ? {} : { data: cause.data }) }) };
  }
}

/**
 * A step's policy from its own options, each one it leaves out taken from the engine's default.
 * Throws `INVALID_INPUT` like `resolveRetryPolicy`.
 */
export function resolveStepRetry(step: RetryOptions, defaults: RetryOptions | undefined): RetryPolicy {
  if (step.retries === undefined && step.backoff === undefined && step.retryIf === undefined) {
    // Most steps set none of the three: their policy is the engine default's, resolved once.
    const key = defaults ?? NO_DEFAULTS;
    let policy = defaultPolicies.get(key);
    if (policy === undefined) defaultPolicies.set(key, (policy = Object.freeze(resolveRetryPolicy(defaults?.retries, defaults?.backoff, defaults?.retryIf))));
    return policy;
  }
  return resolveRetryPolicy(step.retries ?? defaults?.retries, step.backoff ?? defaults?.backoff, step.retryIf ?? defaults?.retryIf);
}

const NO_DEFAULTS: RetryOptions = {};
const defaultPolicies = new WeakMap<RetryOptions, RetryPolicy>();

/**
 * Resolves `retries` (extra attempts after the first), `backoff` and `retryIf` into a policy whose every wait
 * is a whole number of milliseconds from 0 up to the cap. Throws `INVALID_INPUT` naming the field
 * on bad values (see `toMilliseconds` for durations).
 */
export function resolveRetryPolicy(retries: number | undefined, backoff: BackoffOptions | undefined, retryIf?: RetryPredicate): RetryPolicy {
  if (retryIf !== undefined && typeof retryIf !== 'function') throw new CairnError('INVALID_INPUT', `retryIf must be a function, got ${typeof retryIf}`);
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
    ...(retryIf === undefined ? {} : { retryIf }),
    // `factor ** n` may reach Infinity (and 0 * Infinity is NaN): the cap is applied to the growth
    // itself, so the wait is always a finite whole number within [0, cap].
    delayAfter: (attempt) => {
      if (!exponential || base === 0) return Math.min(cap, base);
      const growth = factor ** Math.max(0, attempt - 1);
      return growth >= cap / base ? cap : Math.min(cap, Math.ceil(base * growth));
    },
  };
}
