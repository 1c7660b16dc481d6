import { CairnError } from '@cairn/core';
import { newStepRecord, TERMINAL_RUN_STATUSES, type Fence, type NewStep, type StepStore, type StepTransition } from '@cairn/core/backend';
import type { StepRecord } from '@cairn/core';
import type { Filter, UpdateFilter } from 'mongodb';
import type { StoreContext } from './context.js';
import { attemptField, stepPath, toStepDoc, toStepRecord } from './documents.js';
import type { AttemptDoc, RunDoc } from './documents.js';
import { assertWritable, contention, guard } from './errors.js';
import { encodeError, encodeJson } from './json-codec.js';
import { encodeKey } from './key-codec.js';
import { MAX_RETRIES } from './run-wake.js';

const TERMINAL = [...TERMINAL_RUN_STATUSES];

/** The filter every write of an executing run starts from: the run, its fence, not terminal. */
export function liveRun(runId: string, fence: Fence): Record<string, unknown> {
  const filter: Record<string, unknown> = { _id: runId, status: { $nin: TERMINAL } };
  if (fence !== null) filter.fence = fence;
  return filter;
}

async function load(ctx: StoreContext, runId: string): Promise<StepRecord[]> {
  const doc = await ctx.runs.findOne({ _id: runId }, { projection: { steps: 1 } });
  if (!doc?.steps) return [];
  return Object.entries(doc.steps)
    .map(([field, step]) => toStepRecord(runId, field, step))
    .sort((a, b) => a.seq - b.seq);
}

async function insert(ctx: StoreContext, runId: string, fence: Fence, step: NewStep, now: number) {
  const field = encodeKey(step.key);
  const path = stepPath(field);
  const doc = toStepDoc(newStepRecord(runId, step, now, fence));
  if (step.status === 'running') {
    const first: AttemptDoc = { attempt: 1, status: 'running', startedAt: now };
    if (step.worker !== undefined) first.worker = step.worker;
    doc.attempts[attemptField(1)] = first;
  } else if (step.finishedAttempt !== undefined) {
    // A step recorded already finished: its attempt 1 is inside the same document update.
    const done = step.finishedAttempt;
    const first: AttemptDoc = { attempt: 1, status: done.status, worker: done.worker, startedAt: done.startedAt, endedAt: now };
    if (done.output !== undefined) first.output = encodeJson(done.output);
    if (done.error !== undefined) first.error = encodeError(done.error);
    doc.attempts[attemptField(1)] = first;
  }
  for (let i = 0; i < MAX_RETRIES; i++) {
    // ONE update: fence, liveness and "key not recorded yet" are all in the filter.
    const filter = { ...liveRun(runId, fence), [path]: { $exists: false } } as Filter<RunDoc>;
    const result = await ctx.runs.updateOne(filter, { $set: { [path]: doc } } as UpdateFilter<RunDoc>);
    if (result.matchedCount > 0) return { step: toStepRecord(runId, field, doc), created: true };
    const current = assertWritable(await ctx.runs.findOne({ _id: runId }, { projection: { fence: 1, status: 1, [path]: 1 } }), runId, fence);
    const existing = current.steps?.[field];
    if (existing) return { step: toStepRecord(runId, field, existing), created: false };
  }
  throw contention('steps.insert', runId);
}

/**
 * Builds the step compare-and-set. `endAttempt` closes the record of attempt `from.attempt` only
 * if it exists (as the reference store does); since a classic update cannot branch, the filter
 * states which case it was built for (`openExists`), and the caller retries with the other case.
 */
function buildTransition(runId: string, fence: Fence, t: StepTransition, now: number, openExists: boolean) {
  const base = stepPath(encodeKey(t.key));
  const next = t.to.attempt ?? t.from.attempt;
  const filter: Record<string, unknown> = {
    ...liveRun(runId, fence),
    [`${base}.status`]: { $in: t.from.status },
    [`${base}.attempt`]: t.from.attempt,
  };
  const set: Record<string, unknown> = {
    [`${base}.status`]: t.to.status,
    [`${base}.attempt`]: next,
    [`${base}.updatedAt`]: now,
  };
  const unset: Record<string, ''> = {};
  if (t.to.output !== undefined) set[`${base}.output`] = encodeJson(t.to.output);
  if (t.to.error !== undefined) set[`${base}.error`] = encodeError(t.to.error);
  if (t.to.wakeAt === null) unset[`${base}.wakeAt`] = '';
  else if (t.to.wakeAt !== undefined) set[`${base}.wakeAt`] = t.to.wakeAt;
  if (t.to.childRunId !== undefined) set[`${base}.childRunId`] = t.to.childRunId;
  if (t.to.turn !== undefined) set[`${base}.turn`] = t.to.turn;
  const open = `${base}.attempts.${attemptField(t.from.attempt)}`;
  // Reopening the same attempt number replaces its record (one record per attempt number).
  const reopened = t.startAttempt !== undefined && next === t.from.attempt;
  if (t.endAttempt && !reopened) {
    filter[open] = { $exists: openExists };
    if (openExists) {
      set[`${open}.status`] = t.endAttempt.status;
      set[`${open}.endedAt`] = now;
      if (t.endAttempt.output !== undefined) set[`${open}.output`] = encodeJson(t.endAttempt.output);
      if (t.endAttempt.error !== undefined) set[`${open}.error`] = encodeError(t.endAttempt.error);
    }
  }
  if (t.startAttempt) {
    const started: AttemptDoc = { attempt: next, status: 'running', worker: t.startAttempt.worker, startedAt: now };
    set[`${base}.attempts.${attemptField(next)}`] = started;
  }
  const update: Record<string, unknown> = { $set: set };
  if (Object.keys(unset).length > 0) update.$unset = unset;
  return { filter: filter as Filter<RunDoc>, update: update as UpdateFilter<RunDoc> };
}

async function transition(ctx: StoreContext, runId: string, fence: Fence, t: StepTransition, now: number) {
  const field = encodeKey(t.key);
  const path = stepPath(field);
  let openExists = true;
  for (let i = 0; i < MAX_RETRIES; i++) {
    const { filter, update } = buildTransition(runId, fence, t, now, openExists);
    const doc = await ctx.runs.findOneAndUpdate(filter, update, await ctx.modifyOptions({ [path]: 1 }));
    const written = doc?.steps?.[field];
    if (written) return toStepRecord(runId, field, written);
    const current = assertWritable(await ctx.runs.findOne({ _id: runId }, { projection: { fence: 1, status: 1, [path]: 1 } }), runId, fence);
    const step = current.steps?.[field];
    if (!step || !t.from.status.includes(step.status) || step.attempt !== t.from.attempt) {
      throw new CairnError('STEP_CONFLICT', `Step ${t.key} of run ${runId} does not match the expected status/attempt`, {
        data: { runId, key: t.key, status: step?.status ?? null, attempt: step?.attempt ?? null },
      });
    }
    openExists = step.attempts?.[attemptField(t.from.attempt)] !== undefined;
  }
  throw contention('steps.transition', runId);
}

/** The `steps` part of the store. */
export function createStepStore(ctx: StoreContext): StepStore {
  return {
    load: (runId) => guard('steps.load', () => load(ctx, runId)),
    insert: (runId, fence, step, now) => guard('steps.insert', () => ctx.exclusive(runId, () => insert(ctx, runId, fence, step, now))),
    transition: (runId, fence, t, now) => guard('steps.transition', () => ctx.exclusive(runId, () => transition(ctx, runId, fence, t, now))),
  };
}
