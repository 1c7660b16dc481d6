import type { RoutineParam } from '../routines/params.js';

// The run and state procedures are MySQL/MariaDB's alone: PostgreSQL and SQLite write runs with
// `UPDATE … RETURNING` and state in one statement or transaction.

/** Parameters of `<prefix>run_claim` (MySQL/MariaDB), in call order. */
export const RUN_CLAIM_PARAMS = [
  ['p_run_id', 'id'],
  ['p_owner', 'text'],
  ['p_expires_at', 'bigint'],
  ['p_now', 'bigint'],
] as const satisfies readonly RoutineParam[];

/** Parameters of `<prefix>run_renew` (MySQL/MariaDB), in call order. */
export const RUN_RENEW_PARAMS = [
  ['p_run_id', 'id'],
  ['p_fence', 'bigint'],
  ['p_expires_at', 'bigint'],
  ['p_now', 'bigint'],
] as const satisfies readonly RoutineParam[];

/** Parameters of `<prefix>state_set` (MySQL/MariaDB), in call order. */
export const STATE_SET_PARAMS = [
  ['p_run_id', 'id'],
  ['p_fence', 'bigint'], // NULL: an unfenced write
  ['p_key_hash', 'hash'],
  ['p_state_key', 'text'],
  ['p_value', 'json'],
  ['p_now', 'bigint'],
] as const satisfies readonly RoutineParam[];

/**
 * Parameters of `<prefix>run_request_cancel` (MySQL/MariaDB) as `cairn_0002_step_routines` created
 * it (no reason); that migration keeps creating exactly this, and the down of
 * `cairn_0004_run_deadline` restores it.
 */
export const RUN_REQUEST_CANCEL_PARAMS_0002 = [
  ['p_run_id', 'id'],
  ['p_now', 'bigint'],
] as const satisfies readonly RoutineParam[];

/** Parameters of `<prefix>run_request_cancel` (MySQL/MariaDB) since `cairn_0004_run_deadline`, in call order. */
export const RUN_REQUEST_CANCEL_PARAMS = [
  ['p_run_id', 'id'],
  ['p_reason', 'text'], // NULL: no reason; stored only by the request that sets cancel_requested
  ['p_now', 'bigint'],
] as const satisfies readonly RoutineParam[];

/** Parameters of `<prefix>run_transition` (MySQL/MariaDB), in call order. */
export const RUN_TRANSITION_PARAMS = [
  ['p_run_id', 'id'],
  ['p_fence', 'bigint'],
  ['p_from_statuses', 'name'], // comma-separated
  ['p_to', 'short'],
  ['p_wake_at', 'bigint'], // waiting: the requested wake-up (NULL: keep wake_at)
  ['p_set_output', 'flag'],
  ['p_output', 'json'],
  ['p_set_error', 'flag'],
  ['p_error', 'json'],
  ['p_now', 'bigint'],
] as const satisfies readonly RoutineParam[];

/** The run and state procedures of one table prefix. */
export interface MysqlRunRoutineNames {
  runClaim: string;
  runRenew: string;
  runTransition: string;
  runRequestCancel: string;
  stateSet: string;
}

const namesByPrefix = new Map<string, MysqlRunRoutineNames>();

/** The names of the run and state procedures for a (validated) table prefix, built once per prefix. */
export function mysqlRunRoutineNames(prefix: string): MysqlRunRoutineNames {
  let names = namesByPrefix.get(prefix);
  if (names === undefined) {
    names = Object.freeze({
      runClaim: `${prefix}run_claim`,
      runRenew: `${prefix}run_renew`,
      runTransition: `${prefix}run_transition`,
      runRequestCancel: `${prefix}run_request_cancel`,
      stateSet: `${prefix}state_set`,
    });
    namesByPrefix.set(prefix, names);
  }
  return names;
}
