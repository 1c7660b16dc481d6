import { CairnError, isTerminalRunStatus } from '@cairn/core';
import {
  decodeEndedCursor,
  decodeRunCursor,
  encodeEndedCursor,
  encodeRunCursor,
  normaliseListLimit,
  toRunSummary,
  type DeleteCondition,
  type DueRun,
  type EndedRun,
  type EndedRunPage,
  type EndedRunQuery,
  type NewRun,
  type RunReopen,
  type RunStore,
} from '@cairn/core/backend';
import { runNotFound } from '@cairn/core/backend';
import type { RunPage, RunQuery, RunRecord } from '@cairn/core';
import type { Filter } from 'mongodb';
import type { StoreContext } from './context.js';
import { RUN_ONLY, RUN_SUMMARY, stepPath, toRunRecord } from './documents.js';
import { encodeKey } from './key-codec.js';
import type { RunDoc } from './documents.js';
import { contention, guard, isDuplicateKey } from './errors.js';
import { encodeJson } from './json-codec.js';
import { claim, renew, transition } from './run-lease.js';
import { setRunTags, tagFields, tagTokens } from './run-tags.js';
import { MAX_RETRIES, tryWake, type WakeExtra } from './run-wake.js';

/** The `idem` value unique per workflow: the idempotency key, or the run id when there is none. */
export const idemOf = (runId: string, idempotencyKey: string | undefined): string => (idempotencyKey === undefined ? `r:${runId}` : `k:${idempotencyKey}`);

async function create(ctx: StoreContext, input: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
  const doc: RunDoc = {
    _id: input.id,
    workflow: input.workflow,
    version: input.version,
    input: encodeJson(input.input),
    status: 'pending',
    idem: idemOf(input.id, input.idempotencyKey),
    fence: 0,
    cancelRequested: false,
    createdAt: now,
    updatedAt: now,
    steps: {},
    state: {},
    events: {},
  };
  if (input.parent) doc.parent = { runId: input.parent.runId, stepKey: input.parent.stepKey };
  if (input.idempotencyKey !== undefined) doc.idempotencyKey = input.idempotencyKey;
  if (input.wakeAt !== undefined) {
    doc.wakeAt = input.wakeAt;
    doc.dueAt = input.wakeAt;
  }
  if (input.deadline !== undefined) doc.deadline = input.deadline;
  if (input.forkedFrom !== undefined) doc.forkedFrom = { runId: input.forkedFrom.runId, stepKey: input.forkedFrom.stepKey };
  if (input.traceContext !== undefined) doc.traceContext = JSON.stringify(input.traceContext);
  // Priority 0 is the default: stored absent, read back absent.
  if (input.priority !== undefined && input.priority !== 0) doc.priority = input.priority;
  if (input.tags !== undefined && Object.keys(input.tags).length > 0) Object.assign(doc, tagFields(input.tags));
  for (let i = 0; i < MAX_RETRIES; i++) {
    try {
      // The unique index on (workflow, idem) makes this insert the whole idempotency check.
      await ctx.runs.insertOne(doc);
      return { run: toRunRecord(doc), created: true };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    if (input.idempotencyKey !== undefined) {
      const existing = await ctx.runs.findOne({ workflow: input.workflow, idem: doc.idem }, { projection: RUN_ONLY });
      if (existing) return { run: toRunRecord(existing), created: false };
    }
    if (await ctx.runs.findOne({ _id: input.id }, { projection: { _id: 1 } })) {
      throw new CairnError('INVALID_INPUT', `Run id ${input.id} already exists`, { data: { runId: input.id } });
    }
    // The run that held the key was deleted in between: try again.
  }
  throw contention('runs.create', input.id);
}

async function list(ctx: StoreContext, query: RunQuery): Promise<RunPage> {
  const limit = normaliseListLimit(query.limit);
  const filter: Filter<RunDoc> = {};
  if (query.workflow !== undefined) filter.workflow = query.workflow;
  if (query.status !== undefined) filter.status = { $in: [query.status].flat() };
  if (query.parentRunId !== undefined) filter['parent.runId'] = query.parentRunId;
  // With `workflow`, served by the unique (workflow, idem) index.
  if (query.idempotencyKey !== undefined) filter.idem = idemOf('', query.idempotencyKey);
  // Served by the multikey (tg, createdAt, _id) index on the first token.
  if (query.tags !== undefined) filter.tg = { $all: tagTokens(query.tags) };
  const createdAt: Record<string, number> = {};
  if (query.createdAfter !== undefined) createdAt.$gte = query.createdAfter;
  if (query.createdBefore !== undefined) createdAt.$lt = query.createdBefore;
  if (query.cursor !== undefined) {
    const after = decodeRunCursor(query.cursor);
    // The $lte bound keeps the index range tight; the $or orders ties by id.
    createdAt.$lte = after.createdAt;
    filter.$or = [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, _id: { $lt: after.id } }];
  }
  if (Object.keys(createdAt).length > 0) filter.createdAt = createdAt;
  const docs = await ctx.runs
    .find(filter, { projection: RUN_SUMMARY })
    .sort({ createdAt: -1, _id: -1 })
    .limit(limit + 1)
    .toArray();
  const page = docs.slice(0, limit).map(toRunRecord);
  const result: RunPage = { runs: page.map(toRunSummary) };
  const last = page[page.length - 1];
  if (docs.length > limit && last) result.nextCursor = encodeRunCursor(last);
  return result;
}

async function wake(ctx: StoreContext, runId: string, now: number): Promise<void> {
  for (let i = 0; i < MAX_RETRIES; i++) {
    if ((await tryWake(ctx, runId, now, {}, false)).hit) return;
    const doc = await ctx.runs.findOne({ _id: runId }, { projection: { status: 1 } });
    if (!doc || isTerminalRunStatus(doc.status)) return;
  }
  throw contention('runs.wake', runId);
}

async function promiseWake(ctx: StoreContext, runId: string, at: number, now: number): Promise<void> {
  for (let i = 0; i < MAX_RETRIES; i++) {
    if ((await tryWake(ctx, runId, at, { min: { promisedAt: at }, inc: { promises: 1 }, set: { updatedAt: now } }, false)).hit) return;
    const doc = await ctx.runs.findOne({ _id: runId }, { projection: { status: 1 } });
    if (!doc || isTerminalRunStatus(doc.status)) return;
  }
  throw contention('runs.promiseWake', runId);
}

async function keepPromise(ctx: StoreContext, runId: string, now: number): Promise<void> {
  for (let i = 0; i < MAX_RETRIES; i++) {
    // The last promise (the usual case: one child ending) first, so a child's end costs one update
    // on a waiting parent; else one promise fewer. At none the promise is forgotten.
    const last = { filter: { $nor: [{ promises: { $gt: 1 } }] }, unset: { promisedAt: '', promises: '' } } as WakeExtra;
    if ((await tryWake(ctx, runId, now, last, false)).hit) return;
    if ((await tryWake(ctx, runId, now, { filter: { promises: { $gt: 1 } }, inc: { promises: -1 } }, false)).hit) return;
    const doc = await ctx.runs.findOne({ _id: runId }, { projection: { status: 1 } });
    if (!doc || isTerminalRunStatus(doc.status)) return;
  }
  throw contention('runs.keepPromise', runId);
}

async function requestCancel(ctx: StoreContext, runId: string, now: number, reason: string | undefined): Promise<RunRecord | undefined> {
  for (let i = 0; i < MAX_RETRIES; i++) {
    // The first request's reason is kept: it is written only by the update that sets the flag.
    if (reason !== undefined) {
      const first = await tryWake(ctx, runId, now, { filter: { cancelRequested: false }, set: { cancelRequested: true, cancelReason: reason } }, true);
      if (first.doc) return toRunRecord(first.doc);
    }
    const { doc } = await tryWake(ctx, runId, now, { filter: reason === undefined ? {} : { cancelRequested: true }, set: { cancelRequested: true } }, true);
    if (doc) return toRunRecord(doc);
    const current = await ctx.runs.findOne({ _id: runId }, { projection: RUN_ONLY });
    if (!current) return undefined;
    if (isTerminalRunStatus(current.status)) return toRunRecord(current);
  }
  throw contention('runs.requestCancel', runId);
}

async function findDue(ctx: StoreContext, now: number, limit: number): Promise<DueRun[]> {
  if (!(limit > 0)) return [];
  const docs = await ctx.runs
    // A paused run is passed over (its dueAt is kept: the index stays exact for the rest).
    .find({ dueAt: { $lte: now }, paused: { $exists: false } }, { projection: { _id: 1, workflow: 1, status: 1, wakeAt: 1, lease: 1, dueAt: 1 } })
    .sort({ dueAt: 1, _id: 1 })
    .limit(limit)
    .toArray();
  const due: DueRun[] = [];
  for (const doc of docs) {
    // dueAt is exact by construction; re-checking costs nothing and guards against old documents.
    if ((doc.status === 'pending' || doc.status === 'waiting') && doc.wakeAt !== undefined && doc.wakeAt <= now) {
      due.push({ id: doc._id, workflow: doc.workflow, reason: 'wake' });
    } else if (doc.status === 'running' && doc.lease && doc.lease.expiresAt <= now) {
      due.push({ id: doc._id, workflow: doc.workflow, reason: 'lease-expired' });
    }
  }
  return due;
}

/** `runs.reopen`: one conditional update (status failed/cancelled at the expected fence) of the run document. */
async function reopen(ctx: StoreContext, runId: string, r: RunReopen, now: number): Promise<RunRecord> {
  const current = await ctx.runs.findOne({ _id: runId }, { projection: RUN_ONLY });
  if (!current) throw runNotFound(runId);
  const conflict = () =>
    new CairnError(
      'RUN_CONFLICT',
      `Run ${runId} is ${current.status} (fence ${current.fence}); only a failed or cancelled run at fence ${r.fence} can be reopened`,
      {
        data: { runId, status: current.status },
      },
    );
  if ((current.status !== 'failed' && current.status !== 'cancelled') || current.fence !== r.fence) throw conflict();
  const retries = JSON.stringify([...(current.retries === undefined ? [] : (JSON.parse(current.retries) as unknown[])), r.retry]);
  const unset: Record<string, ''> = { lease: '', output: '', error: '', cancelReason: '' };
  for (const key of r.forget) unset[stepPath(encodeKey(key))] = '';
  if (r.deadline === null) unset.deadline = '';
  const set: Partial<RunDoc> = { status: 'pending', cancelRequested: false, wakeAt: now, dueAt: now, updatedAt: now, retries, fence: r.fence + 1 };
  if (typeof r.deadline === 'number') set.deadline = r.deadline;
  // The filter repeats the checks: a concurrent reopen or write in between makes it match nothing.
  const updated = await ctx.runs.findOneAndUpdate(
    { _id: runId, status: { $in: ['failed', 'cancelled'] }, fence: r.fence },
    { $set: set, $unset: unset },
    await ctx.modifyOptions(),
  );
  if (!updated) throw conflict();
  return toRunRecord(updated);
}

/** `runs.listEnded`: a range of the (status, updatedAt, _id) index, oldest first. */
async function listEnded(ctx: StoreContext, query: EndedRunQuery): Promise<EndedRunPage> {
  const filter: Filter<RunDoc> = { status: query.status, updatedAt: { $lt: query.updatedBefore } };
  if (query.cursor !== undefined) {
    const after = decodeEndedCursor(query.cursor);
    filter.updatedAt = { $lt: query.updatedBefore, $gte: after.at };
    filter.$or = [{ updatedAt: { $gt: after.at } }, { updatedAt: after.at, _id: { $gt: after.id } }];
  }
  const docs = await ctx.runs
    .find(filter, { projection: { _id: 1, workflow: 1, status: 1, updatedAt: 1, parent: 1 } })
    .sort({ status: 1, updatedAt: 1, _id: 1 })
    .limit(query.limit + 1)
    .toArray();
  const runs: EndedRun[] = docs.slice(0, query.limit).map((doc) => ({
    id: doc._id,
    workflow: doc.workflow,
    status: doc.status,
    updatedAt: doc.updatedAt,
    ...(doc.parent ? { parent: { runId: doc.parent.runId, stepKey: doc.parent.stepKey } } : {}),
  }));
  const last = runs[runs.length - 1];
  return docs.length > query.limit && last ? { runs, nextCursor: encodeEndedCursor({ at: last.updatedAt, id: last.id }) } : { runs };
}

/** The `runs` part of the store. */
export function createRunStore(ctx: StoreContext): RunStore {
  return {
    create: (run, now) => guard('runs.create', () => ctx.exclusive(run.id, () => create(ctx, run, now))),
    get: (runId) =>
      guard('runs.get', async () => {
        const doc = await ctx.runs.findOne({ _id: runId }, { projection: RUN_ONLY });
        return doc ? toRunRecord(doc) : undefined;
      }),
    list: (query) => guard('runs.list', () => list(ctx, query)),
    setTags: setRunTags(ctx),
    claim: (runId, owner, leaseMs, now) => claim(ctx, runId, owner, leaseMs, now),
    renew: (runId, fence, leaseMs, now) => renew(ctx, runId, fence, leaseMs, now),
    transition: (runId, fence, t, now) => transition(ctx, runId, fence, t, now),
    wake: (runId, now) => guard('runs.wake', () => ctx.exclusive(runId, () => wake(ctx, runId, now))),
    promiseWake: (runId, at, now) => guard('runs.promiseWake', () => ctx.exclusive(runId, () => promiseWake(ctx, runId, at, now))),
    keepPromise: (runId, now) => guard('runs.keepPromise', () => ctx.exclusive(runId, () => keepPromise(ctx, runId, now))),
    requestCancel: (runId, now, reason) => guard('runs.requestCancel', () => ctx.exclusive(runId, () => requestCancel(ctx, runId, now, reason))),
    findDue: (now, limit) => guard('runs.findDue', () => findDue(ctx, now, limit)),
    findByIdempotencyKey: (workflow, idempotencyKey) =>
      guard('runs.findByIdempotencyKey', async () => {
        const doc = await ctx.runs.findOne({ workflow, idem: idemOf('', idempotencyKey) }, { projection: RUN_ONLY });
        return doc ? toRunRecord(doc) : undefined;
      }),
    reopen: (runId, r, now) => guard('runs.reopen', () => ctx.exclusive(runId, () => reopen(ctx, runId, r, now))),
    listEnded: (query) => guard('runs.listEnded', () => listEnded(ctx, query)),
    delete: (runId, condition?: DeleteCondition) =>
      guard('runs.delete', () =>
        ctx.exclusive(runId, async () => {
          // The whole run (steps, state, events) is this one document: one delete, its condition in the filter.
          const filter: Filter<RunDoc> =
            condition === undefined ? { _id: runId } : { _id: runId, status: { $in: condition.statuses }, updatedAt: { $lt: condition.updatedBefore } };
          // findOneAndDelete says whether the run had stream entries (`sx`) in the same command, so a
          // run without streams stays one command (FerretDB v1 takes no projection: it returns all).
          const gone = await ctx.runs.findOneAndDelete(filter, (await ctx.server()).projectOnModify ? { projection: { sx: 1 } } : {});
          // Its stream entries live in their own collection: they go after it. A crash in between
          // leaves entries of a run that no longer exists, which an unconditional delete of the id
          // removes (it returns false: there was no run).
          if (gone?.sx === true || (gone === null && condition === undefined)) await ctx.streamEntries.deleteMany({ r: runId });
          return gone !== null;
        }),
      ),
  };
}
