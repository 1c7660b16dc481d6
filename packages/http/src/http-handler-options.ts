// The options of `createHttpHandler`, checked once when the handler is made: a handler that would
// refuse every push, or accept a forged one, is a mistake to report at deploy, not per request.

/** How `createHttpHandler` authenticates and bounds each push. */
export interface HttpHandlerOptions {
  /**
   * The shared secrets a push may be signed with (at least one, each at least 16 characters; use
   * 32 random bytes). Several at once during a rotation: add the new one here, then to the
   * pushers, then remove the old one from both.
   */
  secrets: string | readonly string[];
  /**
   * How long one push may take, in milliseconds (the platform's function timeout or less). The
   * handler starts no primitive after `maxDurationMs - reserveMs` from the request's arrival.
   */
  maxDurationMs: number;
  /**
   * Kept from the budget for what follows the last primitive: recording it, answering (default:
   * a fifth of `maxDurationMs`, at most 5 s). A step body still running at the budget's end is
   * not cut short: keep step timeouts under this reserve, or the platform may cut the push.
   */
  reserveMs?: number;
  /** How far a push's timestamp may be from this clock, either side, in ms (default 5 minutes). */
  toleranceMs?: number;
  /** The largest body accepted, in bytes (default 64 KiB); a longer one is refused with 413 unread. */
  maxBodyBytes?: number;
  /** Told of each request that failed with a 5xx (a store outage, a bug): log it. */
  onError?: (error: unknown) => void;
}

/** The options as the handler uses them. */
export interface CheckedHandlerOptions {
  secrets: readonly string[];
  maxDurationMs: number;
  reserveMs: number;
  toleranceMs: number;
  maxBodyBytes: number;
  onError: (error: unknown) => void;
}

const MIN_SECRET_LENGTH = 16;

/** Checks the options; throws a `TypeError` naming the first bad one. */
export function checkHandlerOptions(options: HttpHandlerOptions): CheckedHandlerOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('createHttpHandler: options must be an object');
  const secrets = typeof options.secrets === 'string' ? [options.secrets] : options.secrets;
  if (!Array.isArray(secrets) || secrets.length === 0) throw new TypeError('createHttpHandler: secrets must be a string or a non-empty array of strings');
  for (const secret of secrets)
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH)
      throw new TypeError(`createHttpHandler: each secret must be a string of at least ${MIN_SECRET_LENGTH} characters`);
  const positive = (name: string, value: unknown, fallback: number): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new TypeError(`createHttpHandler: ${name} must be a positive number`);
    return value;
  };
  const maxDurationMs = positive('maxDurationMs', options.maxDurationMs, Number.NaN);
  if (Number.isNaN(maxDurationMs)) throw new TypeError('createHttpHandler: maxDurationMs is required');
  const reserveMs = options.reserveMs === 0 ? 0 : positive('reserveMs', options.reserveMs, Math.min(maxDurationMs / 5, 5000));
  if (reserveMs >= maxDurationMs) throw new TypeError('createHttpHandler: reserveMs must be less than maxDurationMs');
  if (options.onError !== undefined && typeof options.onError !== 'function') throw new TypeError('createHttpHandler: onError must be a function');
  return {
    secrets: [...secrets],
    maxDurationMs,
    reserveMs,
    toleranceMs: positive('toleranceMs', options.toleranceMs, 5 * 60_000),
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, 64 * 1024),
    onError: options.onError ?? ((error) => console.error('cairn http handler:', error)),
  };
}
