import type { Duration } from '../engine/define/duration.js';

/**
 * Thrown by a step body (or a compensation) for a failure that retrying cannot fix — a declined
 * card, a validation error: the attempt fails and no further attempt is made, whatever `retries`
 * says, inline or queued. Subclass it to keep your own `name` and `code` in the recorded error:
 * `class CardDeclined extends NonRetryableError { name = 'CardDeclined'; code = 'CARD_DECLINED' }`.
 * The engine recognises it by its `nonRetryable: true` property (`isNonRetryable`), so an error of
 * your own class carrying that property is not retried either, and two installed copies of
 * `@cairn/core` agree.
 */
export class NonRetryableError extends Error {
  /** Marks the error as not worth retrying; see `isNonRetryable`. */
  readonly nonRetryable = true as const;

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'NonRetryableError';
  }
}

/**
 * Thrown by a step body to ask for its next attempt after `retryAfter` instead of the step's
 * backoff (a `429 Retry-After`, a rate limit's reset time). It still costs an attempt: with no
 * attempt left the step fails as usual. The engine reads the `retryAfter` property of any thrown
 * error (`retryAfterOf`), so an error of your own class carrying it works the same. Like every
 * duration it must lie between 0 and 100 years: an invalid one fails the step at once with
 * `INVALID_INPUT` (its cause: the thrown error) instead of retrying at an unintended time.
 */
export class RetryAfterError extends Error {
  /** How long to wait before the next attempt. */
  readonly retryAfter: Duration;

  constructor(message: string, retryAfter: Duration, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RetryAfterError';
    this.retryAfter = retryAfter;
  }
}

/** True when `error` asks not to be retried: it carries `nonRetryable: true` (see `NonRetryableError`). */
export function isNonRetryable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { nonRetryable?: unknown }).nonRetryable === true;
}

/** The `retryAfter` a thrown error carries (see `RetryAfterError`), unchecked; `undefined` if none. */
export function retryAfterOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { retryAfter?: unknown }).retryAfter : undefined;
}
