import { checkWritable, type StoreContext } from '../context.js';
import type { StateWrite } from '../dialect/types.js';
import { callRoutine } from '../routines/call-routine.js';
import { orderedArgs } from '../codec/routine-args.js';
import { STATE_SET_PARAMS, mysqlRunRoutineNames } from './run-params.js';

/** `state.set` on MySQL/MariaDB: one call of the `state_set` procedure (lock, check, upsert, bump). */
export async function mysqlSetState(ctx: StoreContext, w: StateWrite): Promise<void> {
  const row = await callRoutine<{ r_fence: unknown; r_status: unknown }>(
    ctx,
    mysqlRunRoutineNames(ctx.names.prefix).stateSet,
    STATE_SET_PARAMS,
    orderedArgs(STATE_SET_PARAMS, { p_run_id: w.id, p_fence: w.fence, p_key_hash: w.hash, p_state_key: w.key, p_value: w.json, p_now: w.now }),
  );
  checkWritable(w.runId, w.fence, row === undefined || row.r_fence === null ? undefined : { fence: row.r_fence, status: row.r_status });
}
