import {
  decodeEndedCursor,
  decodeRunCursor,
  encodeEndedCursor,
  encodeRunCursor,
  hasTags,
  matchesRunQuery,
  normaliseListLimit,
  toRunSummary,
  type DueRun,
  type EndedRun,
  type EndedRunPage,
  type EndedRunQuery,
  type RunTags,
} from '@cairn/core/backend';
import type { RunPage, RunQuery, RunRecord, RunStatus } from '@cairn/core';
import type { RunCursor } from '@cairn/core/backend';
import { idempotencyField } from './keys.js';
import { parseRun, parseStep, toHash, type Hash } from './codec.js';
import { callRunScript, repairIndex, type StoreContext } from './context.js';

/** The tag a tag listing walks the set of (the first of the query's). */
const leadKey = (tags: RunTags): string => Object.keys(tags)[0] as string;

/** Byte order of UTF-8, which is how Redis orders members of equal score. */
export const compareBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The largest batch an index read asks for before it gives up growing. */
const MAX_BATCH = 20_000;

interface Entry {
  id: string;
  score: number;
}

/** `ZRANGE ... WITHSCORES`: flat `[member, score, ...]` (RESP2) or `[[member, score], ...]` (RESP3). */
const entriesOf = (reply: unknown): Entry[] => {
  const items = Array.isArray(reply) ? reply : [];
  const out: Entry[] = [];
  if (items.length > 0 && Array.isArray(items[0])) {
    for (const pair of items as unknown[][]) out.push({ id: String(pair[0]), score: Number(pair[1]) });
    return out;
  }
  for (let i = 0; i + 1 < items.length; i += 2) out.push({ id: String(items[i]), score: Number(items[i + 1]) });
  return out;
};

/** Reads run hashes by id (concurrently: one round trip of latency, per node on a cluster). */
async function readHashes(ctx: StoreContext, ids: readonly string[]): Promise<Array<Hash | undefined>> {
  const replies = await Promise.all(ids.map((id) => ctx.caller.command('runs.list', 'HGETALL', [ctx.keys.run(id)])));
  return replies.map((reply) => {
    const hash = toHash(reply);
    return Object.keys(hash).length === 0 ? undefined : hash;
  });
}

function indexKeysFor(ctx: StoreContext, workflow: string | undefined, statuses: RunStatus[] | undefined, tags: RunTags | undefined): string[] {
  const k = ctx.keys;
  // With tags, the set of the first tag: its runs newest first; the rest of the query is checked on each run.
  const lead = tags === undefined ? undefined : Object.keys(tags)[0];
  if (lead !== undefined) return [k.tagIndex(lead, (tags as RunTags)[lead] as string)];
  if (statuses && workflow !== undefined) return statuses.map((s) => k.workflowStatusIndex(workflow, s));
  if (statuses) return statuses.map((s) => k.statusIndex(s));
  if (workflow !== undefined) return [k.workflowIndex(workflow)];
  return [k.runs];
}

/**
 * The candidates of a `runs.list` by idempotency key (the `{prefix}:idem` hash: one run at most)
 * or by parent. Redis keeps no parent index: a parent's children are the runs its step records
 * name (`childRunId` of its child and select steps), read from the parent's own keys.
 */
async function keyOrParentCandidates(ctx: StoreContext, query: RunQuery): Promise<string[]> {
  if (query.idempotencyKey !== undefined && query.workflow !== undefined) {
    const holder = await ctx.caller.command('runs.list', 'HGET', [`${ctx.keys.global}:idem`, idempotencyField(query.workflow, query.idempotencyKey)]);
    return typeof holder === 'string' ? [holder] : [];
  }
  const reply = await callRunScript(ctx, ctx.scripts.loadSteps, query.parentRunId as string, []);
  const ids = new Set<string>();
  for (const item of reply.payload) {
    const step = parseStep(query.parentRunId as string, toHash(item));
    if (step?.childRunId !== undefined) ids.add(step.childRunId);
  }
  return [...ids];
}

/** `runs.list` by idempotency key or parent: every candidate read and checked, newest first. */
async function listByKeyOrParent(ctx: StoreContext, query: RunQuery, limit: number, after: RunCursor | undefined): Promise<RunPage> {
  const ids = await keyOrParentCandidates(ctx, query);
  const hashes = await readHashes(ctx, ids);
  const runs = hashes
    .map((hash) => (hash ? parseRun(hash) : undefined))
    .filter((run): run is RunRecord => run !== undefined && matchesRunQuery(run, query, after, compareBytes))
    .sort((a, b) => b.createdAt - a.createdAt || compareBytes(b.id, a.id));
  const page = runs.slice(0, limit);
  const last = page[page.length - 1];
  const result: RunPage = { runs: page.map(toRunSummary) };
  if (runs.length > limit && last) result.nextCursor = encodeRunCursor({ createdAt: last.createdAt, id: last.id });
  return result;
}

/**
 * `runs.list`: newest first from the sorted sets (score `createdAt`), then every candidate is read
 * and checked against the filter, so a stale index entry (split mode, after a crash between a run
 * write and its index write) is skipped and repaired rather than returned. Redis reads whole run
 * hashes: the payloads are dropped from the summaries after the read.
 */
export async function listRuns(ctx: StoreContext, query: RunQuery): Promise<RunPage> {
  const limit = normaliseListLimit(query.limit);
  const statuses = query.status === undefined ? undefined : [...new Set([query.status].flat())];
  const after = query.cursor === undefined ? undefined : decodeRunCursor(query.cursor);
  if (statuses && statuses.length === 0) return { runs: [] };
  if (query.idempotencyKey !== undefined || query.parentRunId !== undefined) return listByKeyOrParent(ctx, query, limit, after);
  const keys = indexKeysFor(ctx, query.workflow, statuses, query.tags);

  let max = '+inf';
  if (query.createdBefore !== undefined) max = `(${query.createdBefore}`;
  if (after && (query.createdBefore === undefined || after.createdAt < query.createdBefore)) max = String(after.createdAt);
  const min = query.createdAfter === undefined ? '-inf' : String(query.createdAfter);

  const wanted = limit + 1;
  for (let batch = wanted + 16; ; batch *= 4) {
    const replies = await Promise.all(
      keys.map((key) => ctx.caller.command('runs.list', 'ZRANGE', [key, max, min, 'BYSCORE', 'REV', 'LIMIT', 0, batch, 'WITHSCORES'])),
    );
    const perKey = replies.map(entriesOf);
    const exhausted = perKey.every((entries) => entries.length < batch);
    const seen = new Set<string>();
    const candidates = perKey
      .flat()
      .filter((e) => {
        if (seen.has(e.id)) return false;
        seen.add(e.id);
        return true;
      })
      .filter((e) => !after || e.score < after.createdAt || (e.score === after.createdAt && compareBytes(e.id, after.id) < 0))
      .sort((a, b) => b.score - a.score || compareBytes(b.id, a.id));

    const hashes = await readHashes(
      ctx,
      candidates.map((c) => c.id),
    );
    const runs: RunRecord[] = [];
    const repairs: Promise<void>[] = [];
    candidates.forEach((candidate, i) => {
      const hash = hashes[i];
      const run = hash ? parseRun(hash) : undefined;
      const matches =
        run !== undefined &&
        run.createdAt === candidate.score &&
        (query.workflow === undefined || run.workflow === query.workflow) &&
        (statuses === undefined || statuses.includes(run.status));
      if (query.tags !== undefined) {
        // A tag set holds a superset (see run-tags.ts): an entry of a run without the tag, or of no run, goes.
        if (matches && hasTags(run, query.tags)) runs.push(run);
        else if (run === undefined || !hasTags(run, { [leadKey(query.tags)]: query.tags[leadKey(query.tags)] as string }))
          repairs.push(ctx.caller.command('runs.list', 'ZREM', [keys[0] as string, candidate.id]).then(() => {}, ctx.onIndexError));
      } else if (matches) runs.push(run);
      else repairs.push(repairIndex(ctx, candidate.id, hash));
    });
    await Promise.all(repairs);
    if (runs.length >= wanted || exhausted || batch >= MAX_BATCH) {
      const page = runs.slice(0, limit);
      const last = page[page.length - 1];
      const result: RunPage = { runs: page.map(toRunSummary) };
      if (runs.length > limit && last) result.nextCursor = encodeRunCursor({ createdAt: last.createdAt, id: last.id });
      return result;
    }
  }
}

/** When a run is due by its own record, and why (`undefined` when it is not due by `now`). */
function dueState(run: RunRecord, now: number): { at: number; reason: DueRun['reason'] } | undefined {
  // A paused run is never due: its entry (left by a write whose index update was lost) is repaired away.
  if (run.paused !== undefined) return undefined;
  if ((run.status === 'pending' || run.status === 'waiting') && run.wakeAt !== undefined && run.wakeAt <= now) {
    return { at: run.wakeAt, reason: 'wake' };
  }
  if (run.status === 'running' && run.lease && run.lease.expiresAt <= now) {
    return { at: run.lease.expiresAt, reason: 'lease-expired' };
  }
  return undefined;
}

/**
 * `runs.findDue`: the due sorted set up to `now`, earliest first, each entry checked against its
 * run. An entry whose score differs from the run's real due time is re-scored, one whose run is
 * gone is removed.
 */
export async function findDue(ctx: StoreContext, now: number, limit: number): Promise<DueRun[]> {
  if (!(limit > 0)) return [];
  for (let batch = limit + 16; ; batch *= 4) {
    const reply = await ctx.caller.command('runs.findDue', 'ZRANGE', [ctx.keys.due, '-inf', String(now), 'BYSCORE', 'LIMIT', 0, batch, 'WITHSCORES']);
    const entries = entriesOf(reply);
    const hashes = await readHashes(
      ctx,
      entries.map((e) => e.id),
    );
    const due: Array<DueRun & { at: number }> = [];
    const repairs: Promise<void>[] = [];
    entries.forEach((entry, i) => {
      const hash = hashes[i];
      const run = hash ? parseRun(hash) : undefined;
      const state = run ? dueState(run, now) : undefined;
      if (run && state) due.push({ id: run.id, workflow: run.workflow, reason: state.reason, at: state.at });
      if (!run || !state || state.at !== entry.score) repairs.push(repairIndex(ctx, entry.id, hash));
    });
    await Promise.all(repairs);
    if (due.length >= limit || entries.length < batch || batch >= MAX_BATCH) {
      return due
        .sort((a, b) => a.at - b.at)
        .slice(0, limit)
        .map(({ id, workflow, reason }) => ({ id, workflow, reason }));
    }
  }
}

/**
 * `runs.listEnded`: Redis has no index by `updatedAt`, so it reads the status index (score
 * `createdAt`, never later than `updatedAt`) oldest first below the cutoff and keeps the runs last
 * updated before it; the cursor is a position in that index.
 */
export async function listEnded(ctx: StoreContext, query: EndedRunQuery): Promise<EndedRunPage> {
  const after = query.cursor === undefined ? undefined : decodeEndedCursor(query.cursor);
  const min = after === undefined ? '-inf' : String(after.at);
  let entries: Entry[] = [];
  // Entries at the cursor's own score that were listed already come back too: widen until past them.
  for (let batch = query.limit + 16; ; batch *= 4) {
    const raw = entriesOf(
      await ctx.caller.command('runs.listEnded', 'ZRANGE', [
        ctx.keys.statusIndex(query.status),
        min,
        `(${query.updatedBefore}`,
        'BYSCORE',
        'LIMIT',
        0,
        batch,
        'WITHSCORES',
      ]),
    );
    entries = raw
      .filter((e) => after === undefined || e.score > after.at || (e.score === after.at && compareBytes(e.id, after.id) > 0))
      .sort((a, b) => a.score - b.score || compareBytes(a.id, b.id))
      .slice(0, query.limit);
    if (entries.length >= query.limit || raw.length < batch || batch >= MAX_BATCH) break;
  }
  const hashes = await readHashes(
    ctx,
    entries.map((e) => e.id),
  );
  const runs: EndedRun[] = [];
  entries.forEach((_entry, i) => {
    const hash = hashes[i];
    const run = hash ? parseRun(hash) : undefined;
    if (!run || run.status !== query.status || !(run.updatedAt < query.updatedBefore)) return;
    runs.push({ id: run.id, workflow: run.workflow, status: run.status, updatedAt: run.updatedAt, ...(run.parent ? { parent: run.parent } : {}) });
  });
  const last = entries[entries.length - 1];
  return entries.length === query.limit && last ? { runs, nextCursor: encodeEndedCursor({ at: last.score, id: last.id }) } : { runs };
}
