import { invalidInput } from '../errors/invalid-input.js';

// A W3C carrier holds `traceparent` and `tracestate` (at most 512 characters); a few more entries
// (baggage, vendor headers) are allowed, within bounds every backend stores.
const MAX_ENTRIES = 8;
const MAX_LENGTH = 1024;

/**
 * A trace context carrier (`{ traceparent, tracestate? }`): undefined, or a plain object of at most
 * 8 string entries, keys and values at most 1024 characters, without NUL. `INVALID_INPUT` otherwise.
 * Returns a copy.
 */
export function checkTraceContext(what: string, value: unknown): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) {
    throw invalidInput(what, 'must be a plain object of strings (a W3C carrier: traceparent, tracestate)', value);
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_ENTRIES) throw invalidInput(what, `must have at most ${MAX_ENTRIES} entries`, value);
  const out: Record<string, string> = {};
  for (const [key, entry] of entries) {
    if (typeof entry !== 'string' || key.length === 0 || key.length > MAX_LENGTH || entry.length > MAX_LENGTH || key.includes('\0') || entry.includes('\0')) {
      throw invalidInput(what, `entries must be non-empty keys with string values of at most ${MAX_LENGTH} characters, without NUL`, value);
    }
    out[key] = entry;
  }
  return out;
}
