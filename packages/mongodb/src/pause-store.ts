import type { RunRecord } from '@cairn/core';
import { liftsPause, pausableRun, pauseMark, type PauseScope, type PauseStore, type WorkflowPause, TERMINAL_RUN_STATUSES } from '@cairn/core/backend';
import type { StoreContext } from './context.js';
import { RUN_ONLY, toRunRecord } from './documents.js';
import { contention, guard, isDuplicateKey } from './errors.js';
import { MAX_RETRIES, tryWake } from './run-wake.js';

/** A document of `<prefix>pauses`: `_id` the workflow's name, the pause's time and reason. */
export interface WorkflowPauseDoc {
  _id: string;
  at: number;
  reason?: string;
}

const TERMINAL = [...TERMINAL_RUN_STATUSES];
const lockKey = (workflow: string) => `\u0000pause\u0000${workflow}`;
const toPause = (doc: WorkflowPauseDoc): WorkflowPause =>
  doc.reason === undefined ? { workflow: doc._id, at: doc.at } : { workflow: doc._id, at: doc.at, reason: doc.reason };

/**
 * The `pauses` part. A run's pause is the field `paused` of its document, which the claim's filter
 * requires absent and the due query passes over; each change is one conditional update of the run
 * document (a resume is a wake with the pause removed, `dueAt` kept exact by `tryWake`). Paused
 * workflows are documents of `<prefix>pauses`.
 */
export function createPauseStore(ctx: StoreContext): PauseStore {
  const read = async (runId: string): Promise<RunRecord | undefined> => {
    const doc = await ctx.runs.findOne({ _id: runId }, { projection: RUN_ONLY });
    return doc ? toRunRecord(doc) : undefined;
  };
  return {
    pauseRun: (runId, pause, now) =>
      guard('pauses.pauseRun', () =>
        ctx.exclusive(runId, async () => {
          const doc = await ctx.runs.findOneAndUpdate(
            { _id: runId, status: { $nin: TERMINAL }, paused: { $exists: false } },
            { $set: { paused: pauseMark(pause, now) } },
            await ctx.modifyOptions(),
          );
          if (doc) return { run: toRunRecord(doc), changed: true };
          return { run: pausableRun(runId, await read(runId)), changed: false };
        }),
      ),

    resumeRun: (runId, now, scope?: PauseScope) =>
      guard('pauses.resumeRun', () =>
        ctx.exclusive(runId, async () => {
          for (let i = 0; i < MAX_RETRIES; i++) {
            const current = pausableRun(runId, await read(runId));
            if (!liftsPause(current, scope)) return { run: current, changed: false };
            const mark = current.paused as NonNullable<RunRecord['paused']>;
            // The pause as read (a pause of another scope written meanwhile stays), lifted with a wake.
            const { doc } = await tryWake(ctx, runId, now, { filter: { 'paused.at': mark.at, 'paused.scope': mark.scope }, unset: { paused: '' } }, true);
            if (doc) return { run: toRunRecord(doc), changed: true };
          }
          throw contention('pauses.resumeRun', runId);
        }),
      ),

    pauseWorkflow: (workflow, now, reason) =>
      guard('pauses.pauseWorkflow', () =>
        ctx.exclusive(lockKey(workflow), async () => {
          const doc: WorkflowPauseDoc = reason === undefined ? { _id: workflow, at: now } : { _id: workflow, at: now, reason };
          try {
            await ctx.pauses.insertOne(doc);
            return { pause: toPause(doc), changed: true };
          } catch (error) {
            if (!isDuplicateKey(error)) throw error;
          }
          const existing = await ctx.pauses.findOne({ _id: workflow });
          return { pause: toPause(existing ?? doc), changed: false };
        }),
      ),

    resumeWorkflow: (workflow) =>
      guard('pauses.resumeWorkflow', () => ctx.exclusive(lockKey(workflow), async () => (await ctx.pauses.deleteOne({ _id: workflow })).deletedCount > 0)),

    getWorkflowPause: (workflow) =>
      guard('pauses.getWorkflowPause', async () => {
        const doc = await ctx.pauses.findOne({ _id: workflow });
        return doc ? toPause(doc) : undefined;
      }),

    listWorkflowPauses: () => guard('pauses.listWorkflowPauses', async () => (await ctx.pauses.find({}).sort({ _id: 1 }).limit(1000).toArray()).map(toPause)),
  };
}
