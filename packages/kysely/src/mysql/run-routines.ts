import type { TableNames } from '../schema/tables.js';
import { BEGIN_TRANSACTION, TERMINAL, procedureHead } from './procedure-parts.js';
import type { RequestCancelVersion, RunClaimVersion, RoutineParam } from '../routines/params.js';
import {
  RUN_CLAIM_PARAMS,
  RUN_RENEW_PARAMS,
  RUN_REQUEST_CANCEL_PARAMS,
  RUN_REQUEST_CANCEL_PARAMS_0002,
  RUN_TRANSITION_PARAMS,
  mysqlRunRoutineNames,
} from './run-params.js';

/**
 * The run writes that must return the row they wrote — claim, renew, transition, cancel request —
 * as stored procedures on MySQL/MariaDB, which has no `UPDATE … RETURNING`: lock the run row, evaluate the
 * compare-and-set, update it, read it back, commit — one round trip instead of a four-statement
 * transaction. Each returns one result set: `done` (1 when the write happened) and the run's
 * columns as they are after the call (no row when the run does not exist), so a refused write
 * needs no second read to say why.
 */
export function mysqlRunRoutines(names: TableNames, collation: string): string[] {
  const r = mysqlRunRoutineNames(names.prefix);
  const procedure = runProcedure(names, collation);
  // `waiting`: wake_at becomes the earlier of the requested wake-up and one asked for meanwhile.
  const wake = `case when p_wake_at is null then wake_at when wake_at is null or wake_at > p_wake_at then p_wake_at else wake_at end`;
  return [
    mysqlRunClaimRoutine(names, collation, '0002'),
    procedure(
      r.runRenew,
      RUN_RENEW_PARAMS,
      `fence = p_fence and status not in ${TERMINAL} and lease_owner is not null`,
      `due_at = p_expires_at, lease_expires_at = p_expires_at, updated_at = p_now`,
    ),
    // MySQL assigns left to right: due_at and wake_at read the old wake_at and lease_expires_at,
    // which later assignments change.
    procedure(
      r.runTransition,
      RUN_TRANSITION_PARAMS,
      `fence = p_fence and find_in_set(status, p_from_statuses) > 0 and status not in ${TERMINAL}`,
      `due_at = case p_to when 'waiting' then ${wake} when 'pending' then wake_at when 'running' then lease_expires_at else null end,
        wake_at = case p_to when 'waiting' then ${wake} when 'pending' then wake_at when 'running' then wake_at else null end,
        output_json = if(p_set_output = 1, p_output, output_json),
        error_json = if(p_set_error = 1, p_error, error_json),
        status = p_to,
        lease_owner = if(p_to = 'running', lease_owner, null),
        lease_expires_at = if(p_to = 'running', lease_expires_at, null),
        updated_at = p_now`,
    ),
    mysqlRequestCancelRoutine(names, collation, '0002'),
  ];
}

/**
 * A run-write procedure: lock the row, evaluate `condition` on it, update it by id alone (so the
 * outcome never depends on whether the driver reports found or changed rows), read it back.
 */
function runProcedure(names: TableNames, collation: string) {
  const runs = `\`${names.runs}\``;
  return (name: string, params: readonly RoutineParam[], condition: string, set: string) => `${procedureHead(name, params, collation)}
  ${BEGIN_TRANSACTION}
  select count(*) into v_done from ${runs} where id = p_run_id and ${condition} for update;
  if v_done = 1 then
    update ${runs} set ${set} where id = p_run_id;
  end if;
  select v_done as done, r.* from ${runs} r where r.id = p_run_id;
  commit;
end`;
}

/**
 * `<prefix>run_claim` as version `version` creates it: `'0002'` as `cairn_0002_step_routines`
 * shipped it, `'0015'` (`cairn_0015_run_pause`) also refusing a paused run (`paused_json` set),
 * `'0018'` (`cairn_0018_run_wake_promise`) also keeping a `wake_at` later than the claim on a run
 * that is not pending, lowered to `promised_at` when that is later than the claim, and forgetting
 * a promise whose time came with its count (the next suspension is no later than either; decision 78).
 */
export function mysqlRunClaimRoutine(names: TableNames, collation: string, version: RunClaimVersion): string {
  const notPaused = version === '0002' ? '' : ' and paused_json is null';
  // MySQL assigns left to right: wake_at first, then promises, then promised_at, each reading the
  // old values of the columns assigned after it (status, promised_at).
  const kept = `case when status <> 'pending' and wake_at > p_now then wake_at else null end`;
  const wake = `case when promised_at > p_now and (status = 'pending' or wake_at is null or wake_at <= p_now or wake_at > promised_at)
        then promised_at else ${kept} end`;
  return runProcedure(names, collation)(
    mysqlRunRoutineNames(names.prefix).runClaim,
    RUN_CLAIM_PARAMS,
    `status not in ${TERMINAL}${notPaused} and (lease_owner is null or lease_expires_at <= p_now or lease_owner = p_owner)`,
    version === '0018'
      ? `wake_at = ${wake}, promises = case when promised_at > p_now then promises else null end,
        promised_at = case when promised_at > p_now then promised_at else null end, due_at = p_expires_at, status = 'running', fence = fence + 1,
        lease_owner = p_owner, lease_expires_at = p_expires_at, updated_at = p_now`
      : `due_at = p_expires_at, status = 'running', fence = fence + 1, lease_owner = p_owner, lease_expires_at = p_expires_at,
        wake_at = null, updated_at = p_now`,
  );
}

/**
 * `<prefix>run_request_cancel` as version `version` creates it: `'0002'` as
 * `cairn_0002_step_routines` shipped it, `'0004'` (`cairn_0004_run_deadline`) also stores
 * `p_reason` in `cancel_reason` when this request is the one that sets `cancel_requested`
 * (assigned before it: MySQL evaluates SET left to right).
 */
export function mysqlRequestCancelRoutine(names: TableNames, collation: string, version: RequestCancelVersion): string {
  const r = mysqlRunRoutineNames(names.prefix);
  const lowered = `case when wake_at is null or wake_at > p_now then p_now else wake_at end`;
  const reason = version === '0004' ? `cancel_reason = case when cancel_requested = 0 then p_reason else cancel_reason end, ` : '';
  return runProcedure(names, collation)(
    r.runRequestCancel,
    version === '0004' ? RUN_REQUEST_CANCEL_PARAMS : RUN_REQUEST_CANCEL_PARAMS_0002,
    `status not in ${TERMINAL}`,
    `due_at = case when status in ('pending', 'waiting') then ${lowered} else due_at end,
        wake_at = ${lowered}, ${reason}cancel_requested = 1, updated_at = p_now`,
  );
}
