import type { Json } from '../model/json.js';
import { CairnError } from './cairn-error.js';

/** The codes a driver failure becomes: a store's or a queue's. */
export type DriverErrorCode = 'STORE_ERROR' | 'QUEUE_ERROR';

/**
 * A driver's failure as a `CairnError` of `code`: message `<what> failed: <the driver's message>`,
 * the driver error as `cause`, and `data` when given. `what` names the backend and the operation
 * (`MongoDB runs.get`, `BullMQ send to q`).
 */
export function driverError(code: DriverErrorCode, what: string, error: unknown, data?: Json): CairnError {
  const message = error instanceof Error ? error.message : String(error);
  return new CairnError(code, `${what} failed: ${message}`, data === undefined ? { cause: error } : { cause: error, data });
}

/**
 * Runs one driver call: its result, or its failure as `driverError(code, what, error, data)`. A
 * `CairnError` (the backend's own verdict, such as `LEASE_LOST`) passes through unchanged.
 */
export async function callDriver<T>(code: DriverErrorCode, what: string, fn: () => Promise<T>, data?: Json): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (CairnError.is(error)) throw error;
    throw driverError(code, what, error, data);
  }
}
