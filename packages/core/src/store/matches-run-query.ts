import type { RunQuery, RunRecord } from '../model/run.js';
import type { RunCursor } from './run-cursor.js';

/** Orders two run ids: negative, zero or positive (the store's own order of ids). */
export type IdOrder = (a: string, b: string) => number;

const utf16Order: IdOrder = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Whether `run` carries every tag of `tags` with that value (own keys only: `__proto__` is a tag like any other). */
export function hasTags(run: { tags?: Record<string, string> }, tags: Record<string, string>): boolean {
  const own = run.tags;
  return Object.keys(tags).every((key) => own !== undefined && Object.hasOwn(own, key) && own[key] === tags[key]);
}

/**
 * Whether `run` passes every filter of a `runs.list` query and comes after `after` (newest first:
 * an earlier `createdAt`, or the same one and a smaller id by `order`). For stores that filter
 * records they read (memory, Redis); SQL and MongoDB express the same in their queries.
 */
export function matchesRunQuery(run: RunRecord, query: RunQuery, after: RunCursor | undefined, order: IdOrder = utf16Order): boolean {
  const statuses = query.status === undefined ? undefined : [query.status].flat();
  return (
    (query.workflow === undefined || run.workflow === query.workflow) &&
    (statuses === undefined || statuses.includes(run.status)) &&
    (query.createdAfter === undefined || run.createdAt >= query.createdAfter) &&
    (query.createdBefore === undefined || run.createdAt < query.createdBefore) &&
    (query.parentRunId === undefined || run.parent?.runId === query.parentRunId) &&
    (query.idempotencyKey === undefined || run.idempotencyKey === query.idempotencyKey) &&
    (query.tags === undefined || hasTags(run, query.tags)) &&
    (after === undefined || run.createdAt < after.createdAt || (run.createdAt === after.createdAt && order(run.id, after.id) < 0))
  );
}
