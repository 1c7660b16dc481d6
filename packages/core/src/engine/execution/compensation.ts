/** The saga's bookkeeping: what an execution knows about its steps' compensations. */
import type { ErrorRecord } from '../../model/error-record.js';
import type { Json } from '../../model/json.js';
import type { Site } from './outcome.js';
import type { RetryPolicy } from '../define/retry-policy.js';

/** A `compensate` closure of a step called in this execution, with what recording it needs. */
export interface Compensation {
  /** The call site of the step it undoes (key, name, seq). */
  site: Site;
  compensate: (error: Error) => unknown;
  /** The step's own retry policy and timeout, which its compensation runs with. */
  policy: RetryPolicy;
  timeoutMs: number | undefined;
}

/** A compensation that failed for good, as the run error lists it. */
export interface CompensationFailure {
  /** The compensation's step key, `<step key>:compensate`. */
  key: string;
  error: ErrorRecord;
}

/**
 * The probe key a saga replays the handler with to collect compensations (see `Execution`): it
 * ends like a generated key, so no call's key can equal it and the probe never runs a body.
 */
export const SAGA_PROBE_KEY = '$saga:compensate';

/** The key a step's compensation is recorded under. */
export function compensationKey(stepKey: string): string {
  return `${stepKey}:compensate`;
}

/**
 * The run error with `data.compensationFailures` listing each failed compensation as
 * `{ key, error: { name, message, code? } }`. Object data keeps its other fields; other data is
 * kept as `data.value`. Unchanged when nothing failed.
 */
export function withCompensationFailures(record: ErrorRecord, failures: readonly CompensationFailure[]): ErrorRecord {
  if (failures.length === 0) return record;
  const list: Json = failures.map(({ key, error }) => ({
    key,
    error: { name: error.name, message: error.message, ...(error.code === undefined ? {} : { code: error.code }) },
  }));
  const data = record.data;
  let merged: Json;
  if (data === undefined) merged = { compensationFailures: list };
  else if (typeof data === 'object' && data !== null && !Array.isArray(data)) merged = { ...data, compensationFailures: list };
  else merged = { value: data, compensationFailures: list };
  return { ...record, data: merged };
}
