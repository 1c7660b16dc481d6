import { invalidInput } from '../errors/invalid-input.js';
import type { RunQuery, RunStatus } from '../model/run.js';
import { decodeRunCursor } from '../store/run-cursor.js';
import { checkTags } from './check-tags.js';

export { describeValue, invalidInput } from '../errors/invalid-input.js';

/**
 * The longest identifier of each kind, in UTF-16 code units. Workflow names and versions fit the
 * SQL `name` columns (MariaDB `varchar(255)`), run ids the `id` columns (`varchar(128)`); the
 * others are the bounds the engine has always enforced.
 */
export const IDENTIFIER_LIMITS = {
  workflowName: 200,
  version: 100,
  stepName: 500,
  // 'event:' + the name is the wait's step name, which must fit stepName.
  eventName: 494,
  stateKey: 1024,
  idempotencyKey: 512,
  runId: 128,
  workerId: 255,
  // 'schedule:' + the name + ':trigger:' + a uuid (or ':' + an ISO time) fits idempotencyKey.
  scheduleName: 200,
} as const;

// String.prototype.isWellFormed (Node 20+) is not in the ES2023 lib typings this package uses.
const isWellFormed = (value: string): boolean => (value as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Options of `checkIdentifier`. */
export interface IdentifierOptions {
  /** Accept `''` (state keys may be empty); every other rule still holds. Default false. */
  allowEmpty?: boolean;
}

/**
 * Checks an identifier — a workflow or version name, a step or event name, a state key, an
 * idempotency key, a run id — and returns it. An identifier is a primitive string that is
 * non-empty (unless `allowEmpty`), at most `maxLength` UTF-16 code units, well-formed UTF-16 (no
 * lone surrogate: Redis and MongoDB store UTF-8 and would hand back U+FFFD) and free of NUL
 * (which PostgreSQL text cannot hold). These rules are the same for every backend, so a name that
 * works on one works on all.
 *
 * Throws `CairnError('INVALID_INPUT')` whose message starts with `what` and quotes the value
 * (`data: { argument: what, value }`); never reads or writes anything.
 */
export function checkIdentifier(what: string, value: unknown, maxLength: number, options: IdentifierOptions = {}): string {
  if (typeof value !== 'string') throw invalidInput(what, 'must be a string', value);
  if (value.length === 0 && !options.allowEmpty) throw invalidInput(what, 'must not be empty', value);
  if (value.length > maxLength) throw invalidInput(what, `must be at most ${maxLength} characters (it has ${value.length})`, value);
  if (!isWellFormed(value)) throw invalidInput(what, 'must be well-formed UTF-16 (it contains a lone surrogate)', value);
  if (value.includes('\u0000')) throw invalidInput(what, 'must not contain the NUL character (U+0000)', value);
  return value;
}

/** Checks a run id (an identifier of at most `IDENTIFIER_LIMITS.runId` characters) and returns it. */
export function checkRunId(what: string, value: unknown): string {
  return checkIdentifier(what, value, IDENTIFIER_LIMITS.runId);
}

/**
 * Checks an options argument: `undefined` (returned as `{}`) or a plain object whose own keys are
 * all in `allowed` — a misspelt option is refused rather than ignored. Throws `INVALID_INPUT`.
 */
export function checkOptions(what: string, value: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidInput(what, 'must be an object', value);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) throw invalidInput(what, 'must be a plain object', value);
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw invalidInput(what, `has no option ${JSON.stringify(key)} (known: ${allowed.join(', ')})`, value);
  }
  return value as Record<string, unknown>;
}

/** Checks an optional boolean; returns it. Throws `INVALID_INPUT`. */
export function checkOptionalBoolean(what: string, value: unknown): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') throw invalidInput(what, 'must be true or false', value);
  return value;
}

const RUN_STATUSES: readonly RunStatus[] = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'];

function checkRunStatus(what: string, value: unknown): RunStatus {
  if (typeof value !== 'string' || !(RUN_STATUSES as readonly string[]).includes(value)) {
    throw invalidInput(what, `must be one of ${RUN_STATUSES.join(', ')}`, value);
  }
  return value as RunStatus;
}

function checkOptionalTime(what: string, value: unknown): number | undefined {
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value)))
    throw invalidInput(what, 'must be a finite number (epoch milliseconds)', value);
  return value;
}

/**
 * Checks the query of `listRuns` and returns a copy holding only checked fields: `workflow` a
 * workflow name, `status` a run status or a non-empty array of them, `createdAfter` /
 * `createdBefore` finite numbers, `tags` at least one tag (`checkTags`), `limit` an integer in 1..1000, `cursor` a string; no other key.
 * Throws `INVALID_INPUT` naming the field, so an operator object such as `{ $gt: '' }` from a
 * parsed request never reaches a store's filter.
 */
export function checkRunQuery(value: unknown): RunQuery {
  const query = checkOptions('listRuns query', value, [
    'workflow',
    'status',
    'createdAfter',
    'createdBefore',
    'limit',
    'cursor',
    'parentRunId',
    'idempotencyKey',
    'tags',
  ]);
  const checked: RunQuery = {};
  if (query.tags !== undefined) {
    checked.tags = checkTags('listRuns tags', query.tags);
    if (Object.keys(checked.tags).length === 0) throw invalidInput('listRuns tags', 'must name at least one tag', query.tags);
  }
  if (query.workflow !== undefined) checked.workflow = checkIdentifier('listRuns workflow', query.workflow, IDENTIFIER_LIMITS.workflowName);
  if (query.status !== undefined) {
    if (Array.isArray(query.status)) {
      if (query.status.length === 0) throw invalidInput('listRuns status', 'must name at least one status', query.status);
      checked.status = query.status.map((s) => checkRunStatus('listRuns status', s));
    } else {
      checked.status = checkRunStatus('listRuns status', query.status);
    }
  }
  const createdAfter = checkOptionalTime('listRuns createdAfter', query.createdAfter);
  if (createdAfter !== undefined) checked.createdAfter = createdAfter;
  const createdBefore = checkOptionalTime('listRuns createdBefore', query.createdBefore);
  if (createdBefore !== undefined) checked.createdBefore = createdBefore;
  if (query.parentRunId !== undefined) checked.parentRunId = checkRunId('listRuns parentRunId', query.parentRunId);
  if (query.idempotencyKey !== undefined) {
    checked.idempotencyKey = checkIdentifier('listRuns idempotencyKey', query.idempotencyKey, IDENTIFIER_LIMITS.idempotencyKey);
    // Keys are unique per workflow, and every backend's key index is keyed by workflow first.
    if (checked.workflow === undefined)
      throw invalidInput('listRuns idempotencyKey', 'needs a workflow filter too (idempotency keys are unique per workflow)', query.idempotencyKey);
  }
  if (query.limit !== undefined) {
    const { limit } = query;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw invalidInput('listRuns limit', 'must be an integer in 1..1000', limit);
    checked.limit = limit;
  }
  if (query.cursor !== undefined) {
    if (typeof query.cursor !== 'string') throw invalidInput('listRuns cursor', 'must be the nextCursor string of a previous page', query.cursor);
    // Decoded here too (the store decodes it again), so a forged cursor is refused before any read.
    decodeRunCursor(query.cursor);
    checked.cursor = query.cursor;
  }
  return checked;
}
