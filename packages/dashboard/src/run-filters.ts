import { CairnError, type RunQuery, type RunStatus } from '@cairn/core';

const TEXT = ['workflow', 'parentRunId', 'idempotencyKey', 'cursor'] as const;
const TIMES = ['createdAfter', 'createdBefore'] as const;
const KNOWN = new Set<string>([...TEXT, ...TIMES, 'status', 'limit', 'tag']);

const invalid = (name: string, value: string, rule: string) =>
  new CairnError('INVALID_INPUT', `filter ${name} ${rule}, got ${JSON.stringify(value)}`, { data: { argument: name, value } });

/** A time filter: epoch milliseconds, or an ISO 8601 date. */
function parseTime(name: string, value: string): number {
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isSafeInteger(ms)) throw invalid(name, value, 'must be epoch milliseconds or an ISO 8601 date');
  return ms;
}

/**
 * Reads the runs table's query string (`/api/runs?workflow=…&status=failed,cancelled&…`) into a
 * `listRuns` query. Empty values mean "no filter". An unknown parameter, a time that is not a
 * date, a `tag` that is not `key=value`, or a limit that is not a whole number is `INVALID_INPUT`; everything else (status names,
 * identifier rules, the limit's range, the cursor) is checked by the engine itself.
 */
export function parseRunFilters(params: URLSearchParams): RunQuery {
  const filters: RunQuery = {};
  for (const key of params.keys()) if (!KNOWN.has(key)) throw invalid(key, params.get(key) ?? '', 'is not a filter');
  for (const name of TEXT) {
    const value = params.get(name);
    if (value) filters[name] = value;
  }
  for (const name of TIMES) {
    const value = params.get(name);
    if (value) filters[name] = parseTime(name, value);
  }
  const statuses = params
    .getAll('status')
    .flatMap((s) => s.split(','))
    .filter((s) => s.length > 0);
  if (statuses.length === 1) filters.status = statuses[0] as RunStatus;
  else if (statuses.length > 1) filters.status = statuses as RunStatus[];
  // `tag=key=value`, repeated: runs with all of them. Split at the first `=`, so a value may hold more.
  for (const tag of params.getAll('tag')) {
    const at = tag.indexOf('=');
    if (at <= 0) throw invalid('tag', tag, 'must be key=value');
    filters.tags ??= {};
    // Defined, not assigned: a key named __proto__ is a tag like any other.
    Object.defineProperty(filters.tags, tag.slice(0, at), { value: tag.slice(at + 1), enumerable: true, writable: true, configurable: true });
  }
  const limit = params.get('limit');
  if (limit) {
    if (!/^\d+$/.test(limit)) throw invalid('limit', limit, 'must be a whole number');
    filters.limit = Number(limit);
  }
  return filters;
}
