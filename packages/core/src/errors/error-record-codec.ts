import type { ErrorRecord } from '../model/error-record.js';
import type { Json } from '../model/json.js';
import { toJsonRoundTrip } from '../serialization/json-value.js';
import { CairnError } from './cairn-error.js';
import { ERROR_CODES, type ErrorCode } from './error-codes.js';

/**
 * Turns anything thrown into a JSON `ErrorRecord` (depth-limited causes, no functions). A
 * `CairnError`'s `data` goes through the payload rule (`toJsonRoundTrip`): undefined properties
 * left out, undefined array items null. Data JSON cannot carry gives the record of that
 * `NOT_SERIALIZABLE` refusal instead, with the error (without its data) as its cause.
 */
export function toErrorRecord(err: unknown, depth = 0): ErrorRecord {
  if (err instanceof Error || (typeof err === 'object' && err !== null && 'message' in err)) {
    const e = err as Error & { code?: unknown; data?: Json; cause?: unknown };
    const record: ErrorRecord = { name: typeof e.name === 'string' ? e.name : 'Error', message: String(e.message) };
    if (typeof e.code === 'string') record.code = e.code;
    if (typeof e.stack === 'string') record.stack = e.stack;
    if (e.cause !== undefined && depth < 4) record.cause = toErrorRecord(e.cause, depth + 1);
    if (CairnError.is(err) && err.data !== undefined) {
      try {
        record.data = toJsonRoundTrip(err.data, { what: `data of error ${err.code}` }).value;
      } catch (refusal) {
        return { ...toErrorRecord(refusal, depth), cause: record };
      }
    }
    return record;
  }
  return { name: 'Error', message: typeof err === 'string' ? err : safeString(err) };
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Rebuilds a throwable from a record. Records with a known Cairn code become `CairnError`s so
 * `CairnError.is(err, code)` works after a replay; others become plain `Error`s with the
 * original name and message.
 */
export function fromErrorRecord(record: ErrorRecord): Error {
  const cause = record.cause === undefined ? undefined : fromErrorRecord(record.cause);
  let err: Error;
  if (record.name === 'CairnError' && record.code !== undefined && (ERROR_CODES as readonly string[]).includes(record.code)) {
    const options: { cause?: unknown; data?: Json } = {};
    if (cause !== undefined) options.cause = cause;
    if (record.data !== undefined) options.data = record.data;
    err = new CairnError(record.code as ErrorCode, record.message, options);
  } else {
    err = new Error(record.message, cause === undefined ? undefined : { cause });
    err.name = record.name;
    if (record.code !== undefined) (err as Error & { code?: string }).code = record.code;
  }
  if (record.stack !== undefined) err.stack = record.stack;
  return err;
}
