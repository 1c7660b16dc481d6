import type { Json } from '../model/json.js';
import type { ErrorCode } from './error-codes.js';

/**
 * The one error class Cairn throws. Check errors with `CairnError.is(err, 'LEASE_LOST')` rather
 * than `instanceof`, which breaks when two copies of the package are installed.
 */
export class CairnError extends Error {
  /** The machine-readable reason. */
  readonly code: ErrorCode;
  /** JSON details (ids, limits) that help a caller react. */
  readonly data?: Json;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; data?: Json } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CairnError';
    this.code = code;
    if (options.data !== undefined) this.data = options.data;
  }

  /** True when `err` is a Cairn error (from any copy of the package), optionally with `code`. */
  static is(err: unknown, code?: ErrorCode): err is CairnError {
    if (typeof err !== 'object' || err === null) return false;
    const candidate = err as { name?: unknown; code?: unknown };
    if (candidate.name !== 'CairnError' || typeof candidate.code !== 'string') return false;
    return code === undefined || candidate.code === code;
  }
}
