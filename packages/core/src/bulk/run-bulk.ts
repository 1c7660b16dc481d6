// engine.bulk / resumeBulk (docs/operating.md, "Bulk operations"; decision 68 of docs/decisions.md).
import { CairnError } from '../errors/cairn-error.js';
import { MAX_BULK_FAILURES, type BulkCounts, type BulkOperationRecord } from '../model/bulk.js';
import type { RunPage, RunSummary } from '../model/run.js';
import type { BulkStore } from '../store/workflow-store.js';
import { toRunSummary } from '../store/run-summary.js';
import { checkOptions, checkRunId, invalidInput } from '../engine/check-input.js';
import type { EngineRuntime } from '../engine/engine-runtime.js';
import { uuidv7 } from '../engine/uuid.js';
import { tagsUnsupported } from '../engine/check-tags.js';
import { actOnRun, bulkApplies, bulkListQuery, matchesBulkFilter, type BulkActors } from './bulk-actions.js';
import { checkBulkOptions, checkResumeBulkOptions, type BulkProgress, type BulkResult, type BulkRunOutcome } from './bulk-options.js';

/** What the engine gives the bulk operations besides its runtime. */
export interface BulkParts {
  readonly rt: EngineRuntime;
  readonly actors: BulkActors;
}

// Runs acted on at once within a page: enough to keep a pooled store busy, few enough not to
// crowd out the workers sharing it.
const IN_FLIGHT = 16;

function bulkOf(parts: BulkParts): BulkStore {
  const bulk = parts.rt.store.bulk;
  if (bulk === undefined) {
    throw new CairnError(
      'BULK_UNSUPPORTED',
      `The store ${parts.rt.store.name} keeps no bulk operations (WorkflowStore.bulk); nothing was written (a dry run still counts)`,
    );
  }
  return bulk;
}

const zero = (): BulkCounts => ({ matched: 0, done: 0, skipped: 0, failed: 0 });

async function listPage(parts: BulkParts, operation: Pick<BulkOperationRecord, 'filter' | 'cursor'>, limit: number): Promise<RunPage> {
  const { runIds } = operation.filter;
  if (runIds !== undefined) {
    // Named runs: the cursor is the position in the list; a run deleted meanwhile is not there.
    const from = operation.cursor === undefined ? 0 : Number(operation.cursor);
    const records = await Promise.all(runIds.slice(from, from + limit).map((id) => parts.rt.store.runs.get(id)));
    const runs = records.filter((run) => run !== undefined).map(toRunSummary);
    return from + limit < runIds.length ? { runs, nextCursor: String(from + limit) } : { runs };
  }
  const query = { ...bulkListQuery(operation.filter), limit };
  return parts.rt.store.runs.list(operation.cursor === undefined ? query : { ...query, cursor: operation.cursor });
}

/** Acts on `runs` with at most `IN_FLIGHT` at once; outcomes in the runs' order. */
async function actOnPage(parts: BulkParts, operation: BulkOperationRecord, runs: readonly RunSummary[]): Promise<BulkRunOutcome[]> {
  const outcomes: BulkRunOutcome[] = new Array(runs.length);
  let next = 0;
  const lane = async () => {
    while (next < runs.length) {
      const i = next++;
      outcomes[i] = await actOnRun(operation.action, parts.actors, runs[i]!, operation.reason);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, runs.length) }, lane));
  return outcomes;
}

/** The dry run: pages through the filter's runs and counts them; reads only. */
async function dryRun(parts: BulkParts, options: ReturnType<typeof checkBulkOptions>): Promise<BulkResult> {
  const counts = zero();
  let applicable = 0;
  let cursor: string | undefined;
  do {
    const page = await listPage(parts, { filter: options.filter, ...(cursor === undefined ? {} : { cursor }) }, 1000);
    for (const run of page.runs) {
      if (!matchesBulkFilter(options.filter, run)) continue;
      counts.matched += 1;
      if (bulkApplies(options.action, run)) applicable += 1;
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { dryRun: true, action: options.action, filter: options.filter, counts, applicable, outcomes: [] };
}

/**
 * Works on `operation` (owned by `owner`) page by page until it is completed: lists the next page
 * from the stored cursor, acts on the matched runs, then stores the new cursor and counts with a
 * compare-and-set that also renews the owner's lease. A crash between acting and storing loses
 * only that page's record: resumed, the page is listed and acted on again, where each action's own
 * checks skip what was done. A lost compare-and-set (another process took over after this one's
 * lease ran out) stops this call with `BULK_BUSY`.
 */
async function drive(
  parts: BulkParts,
  bulk: BulkStore,
  start: BulkOperationRecord,
  owner: string,
  pageSize: number,
  onProgress: ((progress: BulkProgress) => void) | undefined,
): Promise<BulkResult> {
  const { rt } = parts;
  const outcomes: BulkRunOutcome[] = [];
  let operation = start;
  while (operation.state === 'running') {
    const page = await listPage(parts, operation, pageSize);
    const matched = page.runs.filter((run) => matchesBulkFilter(operation.filter, run));
    const acted = await actOnPage(parts, operation, matched);
    rt.faults.hit({ point: 'bulk-page', runId: operation.id });
    const counts = { ...operation.counts };
    counts.matched += matched.length;
    const failures = [...operation.failures];
    for (const o of acted) {
      counts[o.outcome] += 1;
      if (o.outcome === 'failed' && failures.length < MAX_BULK_FAILURES) failures.push({ runId: o.runId, code: o.code!, message: o.message! });
    }
    const now = rt.clock.now();
    const { cursor: _cursor, owner: _owner, ...rest } = operation;
    const last = page.nextCursor === undefined;
    const next: BulkOperationRecord = {
      ...rest,
      ...(last ? { state: 'completed' } : { cursor: page.nextCursor!, owner: { id: owner, expiresAt: now + rt.timings.leaseMs } }),
      pages: operation.pages + 1,
      counts,
      failures,
      updatedAt: now,
    };
    const written = await bulk.update(next, operation.revision);
    if (written === undefined) throw busy(operation.id, 'another process took it over (this one held it past its lease)');
    operation = written;
    outcomes.push(...acted);
    if (onProgress) onProgress({ id: operation.id, pages: operation.pages, counts: { ...operation.counts }, outcomes: acted });
  }
  return { operation, dryRun: false, action: operation.action, filter: operation.filter, counts: { ...operation.counts }, outcomes };
}

function busy(id: string, why: string, data: Record<string, unknown> = {}): CairnError {
  return new CairnError('BULK_BUSY', `Bulk operation ${id}: ${why}`, { data: { id, ...data } });
}

/** `engine.bulk`. */
export async function runBulk(parts: BulkParts, rawOptions: unknown): Promise<BulkResult> {
  const options = checkBulkOptions(rawOptions);
  // A store without the tag index would not filter on them: refused, dry run included.
  if (options.filter.tags !== undefined && parts.rt.store.runs.setTags === undefined) throw tagsUnsupported('bulk filter.tags', parts.rt.store.name);
  if (options.dryRun === true) return dryRun(parts, options);
  const bulk = bulkOf(parts);
  const now = parts.rt.clock.now();
  const owner = `${parts.rt.workerId}/${uuidv7(now)}`;
  const { operation } = await bulk.create({
    id: uuidv7(now),
    revision: 1,
    action: options.action,
    filter: options.filter,
    ...(options.reason === undefined ? {} : { reason: options.reason }),
    state: 'running',
    pages: 0,
    counts: zero(),
    failures: [],
    owner: { id: owner, expiresAt: now + parts.rt.timings.leaseMs },
    createdAt: now,
    updatedAt: now,
  });
  return drive(parts, bulk, operation, owner, options.pageSize, options.onProgress);
}

/**
 * `engine.resumeBulk`: takes over an operation whose owner is gone (its lease ran out) and goes on
 * from its stored cursor. A completed operation is returned as it is.
 */
export async function resumeBulk(parts: BulkParts, rawId: unknown, rawOptions: unknown): Promise<BulkResult> {
  const id = checkRunId('resumeBulk id', rawId);
  const options = checkResumeBulkOptions(rawOptions);
  const bulk = bulkOf(parts);
  const stored = await bulk.get(id);
  if (stored === undefined) throw new CairnError('BULK_NOT_FOUND', `Bulk operation ${id} not found`, { data: { id } });
  const done = (operation: BulkOperationRecord): BulkResult => ({
    operation,
    dryRun: false,
    action: operation.action,
    filter: operation.filter,
    counts: { ...operation.counts },
    outcomes: [],
  });
  if (stored.state === 'completed') return done(stored);
  if (stored.filter.tags !== undefined && parts.rt.store.runs.setTags === undefined) throw tagsUnsupported('bulk filter.tags', parts.rt.store.name);
  const now = parts.rt.clock.now();
  if (stored.owner !== undefined && stored.owner.expiresAt > now) {
    throw busy(id, `process ${stored.owner.id} works on it until ${new Date(stored.owner.expiresAt).toISOString()}`, { owner: stored.owner });
  }
  const owner = `${parts.rt.workerId}/${uuidv7(now)}`;
  const taken = await bulk.update({ ...stored, owner: { id: owner, expiresAt: now + parts.rt.timings.leaseMs }, updatedAt: now }, stored.revision);
  if (taken === undefined) throw busy(id, 'another process took it over first');
  return drive(parts, bulk, taken, owner, options.pageSize, options.onProgress);
}

/** `engine.getBulk`. */
export async function getBulk(parts: BulkParts, rawId: unknown): Promise<BulkOperationRecord | undefined> {
  return bulkOf(parts).get(checkRunId('getBulk id', rawId));
}

/** `engine.listBulk`: newest first. */
export async function listBulk(parts: BulkParts, rawOptions: unknown): Promise<BulkOperationRecord[]> {
  const raw = checkOptions('listBulk options', rawOptions, ['limit', 'before']);
  const limit = raw.limit ?? 50;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw invalidInput('listBulk limit', 'must be an integer from 1 to 1000', limit);
  const before = raw.before === undefined ? undefined : checkRunId('listBulk before', raw.before);
  return bulkOf(parts).list(before === undefined ? { limit } : { limit, before });
}
