// The memory store's run writes: create, claim and renew, transitions, wake-ups and cancel
// requests, reopen, delete, tags (see `RunStore`).
import { CairnError } from '../errors/cairn-error.js';
import { isTerminalRunStatus, type DeleteCondition, type NewRun, type RunRecord, type RunReopen, type RunTransition, type TagWrite } from '../model/run.js';
import { decideTagWrite, mergeTags } from '../store/tag-write.js';
import { reopenedRun } from '../store/reopened-run.js';
import { runNotFound } from '../store/write-rejections.js';
import type { RunStore } from '../store/workflow-store.js';
import { copy, dropField, type MemoryData } from './memory-data.js';
import { wakeAfterClaim } from './memory-run-promises.js';

type RunWrites = Pick<RunStore, 'create' | 'claim' | 'renew' | 'transition' | 'wake' | 'requestCancel'>;
type RunChanges = Pick<RunStore, 'reopen' | 'delete'> & Required<Pick<RunStore, 'setTags'>>;

/** The writes of `RunStore` that move a run through its life, over the memory store's data. */
export function memoryRunWrites(data: MemoryData): RunWrites {
  return {
    create: (input, now) => createRun(data, input, now),

    async claim(runId, owner, leaseMs, now) {
      const e = data.entry(runId);
      // A paused run is never claimed (see PauseStore): it waits for resumeRun.
      if (!e || isTerminalRunStatus(e.run.status) || e.run.paused !== undefined) return undefined;
      const lease = e.run.lease;
      if (lease && lease.owner !== owner && lease.expiresAt > now) return undefined;
      const next = wakeAfterClaim(e, now);
      e.run.status = 'running';
      e.run.fence += 1;
      e.run.lease = { owner, expiresAt: now + leaseMs };
      if (next === undefined) dropField(e, 'wakeAt');
      else e.run.wakeAt = next;
      e.run.updatedAt = now;
      return copy(e.run);
    },

    async renew(runId, fence, leaseMs, now) {
      const e = data.entry(runId);
      if (!e || e.run.fence !== fence || isTerminalRunStatus(e.run.status) || !e.run.lease) {
        throw new CairnError('LEASE_LOST', `Run ${runId}: lease with fence ${fence} is gone`, { data: { runId, fence } });
      }
      e.run.lease = { owner: e.run.lease.owner, expiresAt: now + leaseMs };
      e.run.updatedAt = now;
      return copy(e.run);
    },

    async transition(runId, fence, t: RunTransition, now) {
      const e = data.writable(runId, fence);
      if (!t.from.includes(e.run.status)) {
        throw new CairnError('RUN_CONFLICT', `Run ${runId} is ${e.run.status}, expected ${t.from.join('|')}`, {
          data: { runId, status: e.run.status },
        });
      }
      if (t.to !== 'running') dropField(e, 'lease');
      if (isTerminalRunStatus(t.to)) dropField(e, 'wakeAt');
      const run = e.run;
      run.status = t.to;
      run.updatedAt = now;
      if (t.to === 'waiting') {
        // A wake requested since the claim, or one for later that the claim kept, must not be lost.
        if (t.wakeAt !== undefined) run.wakeAt = run.wakeAt === undefined ? t.wakeAt : Math.min(run.wakeAt, t.wakeAt);
      } else if (isTerminalRunStatus(t.to)) {
        if (t.output !== undefined) run.output = copy(t.output);
        if (t.error !== undefined) run.error = copy(t.error);
      }
      return copy(run);
    },

    async wake(runId, now) {
      const e = data.entry(runId);
      if (e) data.wakeEntry(e, now);
    },

    async requestCancel(runId, now, reason) {
      const e = data.entry(runId);
      if (!e) return undefined;
      if (!isTerminalRunStatus(e.run.status)) {
        // The first request's reason is kept.
        if (!e.run.cancelRequested && reason !== undefined) e.run.cancelReason = reason;
        e.run.cancelRequested = true;
        data.wakeEntry(e, now);
      }
      return copy(e.run);
    },
  };
}

/** The writes of `RunStore` that change a run from outside its execution: reopen, delete, tags. */
export function memoryRunChanges(data: MemoryData): RunChanges {
  return {
    async reopen(runId, reopen: RunReopen, now) {
      const e = data.entry(runId);
      if (!e) throw runNotFound(runId);
      if ((e.run.status !== 'failed' && e.run.status !== 'cancelled') || e.run.fence !== reopen.fence) {
        throw new CairnError(
          'RUN_CONFLICT',
          `Run ${runId} is ${e.run.status} (fence ${e.run.fence}); only a failed or cancelled run at fence ${reopen.fence} can be reopened`,
          {
            data: { runId, status: e.run.status },
          },
        );
      }
      // A step's attempts go with it.
      for (const key of reopen.forget) e.steps.delete(key);
      e.run = reopenedRun(e.run, reopen, now);
      return copy(e.run);
    },

    async delete(runId, condition?: DeleteCondition) {
      const e = data.entry(runId);
      if (!e) return false;
      if (condition && (!condition.statuses.includes(e.run.status) || !(e.run.updatedAt < condition.updatedBefore))) return false;
      data.runs.delete(runId);
      if (e.run.idempotencyKey !== undefined) data.idempotency.delete(e.run.workflow, e.run.idempotencyKey);
      data.indexTags(runId, e.run.tags, false);
      return true;
    },

    async setTags(runId, fence, write: TagWrite) {
      const e = data.writable(runId, fence);
      if (!decideTagWrite(runId, e.run.tagWrites, write)) return { applied: false };
      data.indexTags(runId, e.run.tags, false);
      e.run.tags = mergeTags(e.run.tags, write.tags);
      e.run.tagWrites = write.seq + 1;
      data.indexTags(runId, e.run.tags, true);
      return { applied: true };
    },
  };
}

/** A new run (or the one its idempotency key already names). */
async function createRun(data: MemoryData, input: NewRun, now: number): ReturnType<RunStore['create']> {
  const idemKey = input.idempotencyKey;
  if (idemKey !== undefined) {
    const existingId = data.idempotency.get(input.workflow, idemKey);
    const existing = existingId === undefined ? undefined : data.runs.get(existingId);
    if (existing) return { run: copy(existing.run), created: false };
  }
  if (data.runs.has(input.id)) {
    throw new CairnError('INVALID_INPUT', `Run id ${input.id} already exists`, { data: { runId: input.id } });
  }
  const run: RunRecord = {
    id: input.id,
    workflow: input.workflow,
    version: input.version,
    input: copy(input.input),
    status: 'pending',
    fence: 0,
    cancelRequested: false,
    createdAt: now,
    updatedAt: now,
  };
  if (input.parent) run.parent = { ...input.parent };
  if (input.idempotencyKey !== undefined) run.idempotencyKey = input.idempotencyKey;
  if (input.wakeAt !== undefined) run.wakeAt = input.wakeAt;
  if (input.deadline !== undefined) run.deadline = input.deadline;
  if (input.traceContext !== undefined) run.traceContext = { ...input.traceContext };
  if (input.forkedFrom !== undefined) run.forkedFrom = { runId: input.forkedFrom.runId, stepKey: input.forkedFrom.stepKey };
  // 0 is the default priority: stored absent, as every backend reads it back.
  if (input.priority !== undefined && input.priority !== 0) run.priority = input.priority;
  if (input.tags !== undefined && Object.keys(input.tags).length > 0) run.tags = copy(input.tags);
  data.runs.set(run.id, { run, steps: new Map(), attemptsOpened: 0, lastTraits: undefined, state: undefined, events: undefined, eventKeys: undefined });
  if (idemKey !== undefined) data.idempotency.set(input.workflow, idemKey, run.id);
  data.indexTags(run.id, run.tags, true);
  return { run: copy(run), created: true };
}
