import { isTerminalRunStatus } from '@cairn/core';
import { encodeJson } from '../codec/json.js';
import { toRunRecord } from '../codec/rows.js';
import { encodeText } from '../codec/text.js';
import type { StoreContext } from '../context.js';
import type { RunWrites } from '../dialect/types.js';
import { orderedArgs, type RoutineArgs } from '../codec/routine-args.js';
import { callRoutine } from '../routines/call-routine.js';
import type { RoutineParam } from '../routines/params.js';
import { RUN_CLAIM_PARAMS, RUN_RENEW_PARAMS, RUN_REQUEST_CANCEL_PARAMS, RUN_TRANSITION_PARAMS, mysqlRunRoutineNames } from './run-params.js';
import type { RunRow } from '../schema/tables.js';

/**
 * A run write through its procedure (one round trip). `done` says whether the compare-and-set
 * matched; `run` is the run as it is after the call (undefined: no such run).
 */
async function runRoutine<P extends readonly RoutineParam[]>(ctx: StoreContext, name: string, params: P, args: RoutineArgs<P>) {
  const row = await callRoutine<RunRow & { done: unknown }>(ctx, name, params, orderedArgs(params, args));
  return { done: row !== undefined && Number(row.done) === 1, run: row === undefined ? undefined : toRunRecord(row) };
}

/**
 * MySQL/MariaDB's run writes: one procedure call each, which locks,
 * compare-and-sets and returns the run, instead of an update and a read-back in a transaction.
 */
export const mysqlRunWrites: RunWrites = {
  claim: async (ctx, runId, owner, leaseMs, now) => {
    const { done, run } = await runRoutine(ctx, mysqlRunRoutineNames(ctx.names.prefix).runClaim, RUN_CLAIM_PARAMS, {
      p_run_id: encodeText(runId),
      p_owner: encodeText(owner),
      p_expires_at: now + leaseMs,
      p_now: now,
    });
    return done ? run : undefined;
  },

  renew: (ctx, runId, fence, leaseMs, now) =>
    runRoutine(ctx, mysqlRunRoutineNames(ctx.names.prefix).runRenew, RUN_RENEW_PARAMS, {
      p_run_id: encodeText(runId),
      p_fence: fence,
      p_expires_at: now + leaseMs,
      p_now: now,
    }),

  transition: (ctx, runId, fence, t, now) => {
    const terminal = isTerminalRunStatus(t.to);
    return runRoutine(ctx, mysqlRunRoutineNames(ctx.names.prefix).runTransition, RUN_TRANSITION_PARAMS, {
      p_run_id: encodeText(runId),
      p_fence: fence,
      p_from_statuses: t.from.join(','),
      p_to: t.to,
      p_wake_at: t.to === 'waiting' ? (t.wakeAt ?? null) : null,
      p_set_output: terminal && t.output !== undefined ? 1 : 0,
      p_output: terminal && t.output !== undefined ? encodeJson(t.output) : null,
      p_set_error: terminal && t.error !== undefined ? 1 : 0,
      p_error: terminal && t.error !== undefined ? encodeJson(t.error as never) : null,
      p_now: now,
    });
  },

  // The run after the request, or as it is when it was already terminal; undefined if missing.
  requestCancel: async (ctx, runId, now, reason) =>
    (
      await runRoutine(ctx, mysqlRunRoutineNames(ctx.names.prefix).runRequestCancel, RUN_REQUEST_CANCEL_PARAMS, {
        p_run_id: encodeText(runId),
        p_reason: reason,
        p_now: now,
      })
    ).run,
};
