import type { ColumnKind } from '../schema/column-types.js';

/** One parameter of a stored routine: its name and the column kind its SQL type follows. */
export type RoutineParam = readonly [name: string, kind: ColumnKind];

/**
 * Parameters of `<prefix>step_insert`, in call order. One list drives both the DDL of every
 * dialect and the argument list of the call, so the two cannot drift apart.
 */
export const STEP_INSERT_PARAMS = [
  ['p_run_id', 'id'],
  ['p_fence', 'bigint'], // NULL: an unfenced write (a queued step worker)
  ['p_key_hash', 'hash'],
  ['p_step_key', 'text'],
  ['p_name', 'text'],
  ['p_kind', 'short'],
  ['p_seq', 'int'],
  ['p_status', 'short'],
  ['p_max_attempts', 'int'],
  ['p_queued', 'flag'],
  ['p_output', 'json'],
  ['p_error', 'json'],
  ['p_wake_at', 'bigint'],
  ['p_child_run_id', 'id'],
  ['p_turn', 'bigint'], // NULL: no turn (cairn_0003_step_turn)
  ['p_worker', 'text'],
  ['p_now', 'bigint'],
  // cairn_0008_step_finished: attempt 1 of a step recorded already finished (NULL status: none)
  ['p_attempt_status', 'short'],
  ['p_attempt_started_at', 'bigint'],
  ['p_attempt_output', 'json'],
  ['p_attempt_error', 'json'],
  ['p_async', 'flag'], // PostgreSQL: commit with synchronous_commit = off (last: the bench's driver counter reads it there)
] as const satisfies readonly RoutineParam[];

/** Parameters of `<prefix>step_transition`, in call order (flags are 0/1). */
export const STEP_TRANSITION_PARAMS = [
  ['p_run_id', 'id'],
  ['p_fence', 'bigint'],
  ['p_key_hash', 'hash'],
  ['p_from_statuses', 'name'], // comma-separated
  ['p_from_attempt', 'int'],
  ['p_to_status', 'short'],
  ['p_to_attempt', 'int'], // NULL: unchanged
  ['p_set_output', 'flag'],
  ['p_output', 'json'],
  ['p_set_error', 'flag'],
  ['p_error', 'json'],
  ['p_wake', 'flag'], // 0 keep, 1 set to p_wake_at, 2 clear
  ['p_wake_at', 'bigint'],
  ['p_child_run_id', 'id'], // NULL: unchanged
  ['p_turn', 'bigint'], // NULL: unchanged (cairn_0003_step_turn)
  ['p_now', 'bigint'],
  ['p_end_status', 'short'], // NULL: no attempt ends
  ['p_end_set_output', 'flag'],
  ['p_end_output', 'json'],
  ['p_end_set_error', 'flag'],
  ['p_end_error', 'json'],
  ['p_start', 'flag'], // 1: open attempt `attempt` (the step's attempt after the update)
  ['p_start_worker', 'text'],
] as const satisfies readonly RoutineParam[];

/**
 * Which shape of the two step routines to create: `'0002'` as `cairn_0002_step_routines` created
 * them (no `turn`; that migration must keep creating exactly this, and `cairn_0003_step_turn`'s
 * down migration restores it), `'0003'` as `cairn_0003_step_turn` replaced them (restored by the
 * down of `cairn_0008_step_finished`), `'0008'` as `cairn_0008_step_finished` replaced them (the
 * store's).
 */
export type StepRoutineVersion = '0002' | '0003' | '0008';

/** The insert parameters `cairn_0008_step_finished` added (a finished attempt 1). */
const FINISHED_ATTEMPT_PARAMS: ReadonlySet<string> = new Set(['p_attempt_status', 'p_attempt_started_at', 'p_attempt_output', 'p_attempt_error']);

/** The parameters, step columns and `turn` switch of one version of the step routines. */
export interface StepRoutineShape {
  insertParams: readonly RoutineParam[];
  transitionParams: readonly RoutineParam[];
  /** Whether the routines read and write `steps.turn`. */
  turn: boolean;
  /**
   * Whether the insert records a finished attempt 1 and stamps `steps.fence`
   * (`cairn_0008_step_finished`).
   */
  finished: boolean;
}

/** The shape of the step routines of `version`. */
export function stepRoutineShape(version: StepRoutineVersion): StepRoutineShape {
  if (version === '0008') return { insertParams: STEP_INSERT_PARAMS, transitionParams: STEP_TRANSITION_PARAMS, turn: true, finished: true };
  const before0008 = ([name]: RoutineParam) => !FINISHED_ATTEMPT_PARAMS.has(name);
  if (version === '0003') return { insertParams: STEP_INSERT_PARAMS.filter(before0008), transitionParams: STEP_TRANSITION_PARAMS, turn: true, finished: false };
  const before = ([name]: RoutineParam) => name !== 'p_turn' && before0008([name, 'id']);
  return { insertParams: STEP_INSERT_PARAMS.filter(before), transitionParams: STEP_TRANSITION_PARAMS.filter(before), turn: false, finished: false };
}

/** The values `step_insert` writes into the step columns of `shape`, in column order (both dialects). */
export function stepInsertValues(shape: StepRoutineShape): string[] {
  return [
    'p_run_id',
    'p_key_hash',
    'p_step_key',
    'p_name',
    'p_kind',
    'p_seq',
    'p_status',
    '1',
    'p_max_attempts',
    'p_queued',
    'p_output',
    'p_error',
    'p_wake_at',
    'p_child_run_id',
    'p_now',
    'p_now',
    ...(shape.turn ? ['p_turn'] : []),
    ...(shape.finished ? ['p_fence'] : []),
  ];
}

/**
 * The attempt-1 record of a step inserted finished (`cairn_0008_step_finished`), as one `INSERT`
 * into the attempts table named `attempts` (quoted for its dialect); the same on both dialects.
 */
export function finishedAttemptInsert(attempts: string): string {
  return `insert into ${attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, p_attempt_status, p_worker, p_attempt_started_at, p_now, p_attempt_output, p_attempt_error);`;
}

/** Which `run_request_cancel` procedure to create: without (`'0002'`) or with (`'0004'`) a reason. */
export type RequestCancelVersion = '0002' | '0004';

/**
 * The versions of `<prefix>run_claim` (MySQL/MariaDB): as `cairn_0002_step_routines` made it,
 * refusing a paused run (`cairn_0015_run_pause`), and keeping a wake-up asked for later than the
 * claim and taking a promise (`cairn_0018_run_wake_promise`).
 */
export type RunClaimVersion = '0002' | '0015' | '0018';

/** The step routines of one table prefix (PostgreSQL functions, MySQL/MariaDB procedures). */
export interface RoutineNames {
  stepInsert: string;
  stepTransition: string;
}

/** Routine names for a (validated) table prefix. */
export function routineNames(prefix: string): RoutineNames {
  // Asked on every step write: built once per prefix.
  let names = namesByPrefix.get(prefix);
  if (names === undefined) namesByPrefix.set(prefix, (names = Object.freeze(buildRoutineNames(prefix))));
  return names;
}

const namesByPrefix = new Map<string, RoutineNames>();

function buildRoutineNames(prefix: string): RoutineNames {
  return {
    stepInsert: `${prefix}step_insert`,
    stepTransition: `${prefix}step_transition`,
  };
}
