import { CairnError } from '@cairn/core';
import { checkWritableRun, driverError, type Fence } from '@cairn/core/backend';

import type { RunDoc } from './documents.js';

const TOO_LARGE_CODES = new Set([10334, 17419, 17420, 10329, 13066]);

/** True when a driver or server error says a document would exceed the BSON size limit. */
export function isTooLarge(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof e.code === 'number' && TOO_LARGE_CODES.has(e.code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (e.name === 'RangeError' && e.code === 'ERR_OUT_OF_RANGE') return true;
  return /larger than the maximum|BSONObjectTooLarge|object to insert too large|document is too large/i.test(message);
}

/** True for a duplicate-key error (unique index or `_id`). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/**
 * Runs one store operation, turning every driver failure into a `CairnError`: `PAYLOAD_TOO_LARGE`
 * when the document would exceed 16 MiB (nothing is written then), `STORE_ERROR` otherwise, with
 * the driver error as `cause`. Cairn errors pass through unchanged.
 */
export async function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (CairnError.is(err)) throw err;
    if (isTooLarge(err)) {
      throw new CairnError('PAYLOAD_TOO_LARGE', `MongoDB ${operation}: the run document would exceed the 16 MiB BSON limit`, {
        cause: err,
        data: { operation },
      });
    }
    throw driverError('STORE_ERROR', `MongoDB ${operation}`, err, { operation });
  }
}

/** Thrown when a compare-and-set loop keeps losing to concurrent writers (should not happen). */
export function contention(operation: string, runId: string): CairnError {
  return new CairnError('STORE_ERROR', `MongoDB ${operation}: run ${runId} kept changing under the write`, {
    data: { operation, runId },
  });
}

/**
 * Explains why a fenced write to a run matched nothing, in the reference store's order: the run
 * is missing (`RUN_NOT_FOUND`), the fence is stale (`LEASE_LOST`), the run is terminal
 * (`RUN_CONFLICT`). Returns the document when none of these holds (the caller decides).
 */
export function assertWritable(doc: RunDoc | null, runId: string, fence: Fence): RunDoc {
  return checkWritableRun(runId, fence, doc);
}
