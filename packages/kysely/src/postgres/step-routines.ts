import { STEP_COLUMNS, STEP_COLUMNS_0001, STEP_COLUMNS_0003, type TableNames } from '../schema/tables.js';
import { finishedAttemptInsert, routineNames, stepInsertValues, stepRoutineShape, type RoutineParam, type StepRoutineVersion } from '../routines/params.js';
import { postgresParamTypes, postgresSignature } from './param-types.js';

const TERMINAL = `('completed', 'failed', 'cancelled')`;

/**
 * The PL/pgSQL functions behind `steps.insert` and `steps.transition`. Each is one statement from
 * the client (`select * from fn(...)`), runs in that statement's transaction, and — unlike a
 * one-off statement — keeps its plans cached for the session, so a step write is parsed and
 * planned once per connection instead of on every call (measured: most of a step write's cost).
 * Every statement inside takes a fresh snapshot (READ COMMITTED), so the row read after a lock
 * wait or a key conflict is the latest committed one.
 *
 * `version` picks the routines of one migration (see `StepRoutineVersion`): `'0003'` also stores
 * `turn` (inserted as given, set by a transition when `p_turn` is not NULL); `'0008'` also stamps
 * `fence` on an inserted step and records the finished attempt 1 of a step inserted finished.
 */
export function postgresRoutines(names: TableNames, version: StepRoutineVersion): string[] {
  const r = routineNames(names.prefix);
  const shape = stepRoutineShape(version);
  const q = (id: string) => `"${id}"`;
  const steps = q(names.steps);
  const runs = q(names.runs);
  const attempts = q(names.attempts);
  const columns = shape.finished ? STEP_COLUMNS : shape.turn ? STEP_COLUMNS_0003 : STEP_COLUMNS_0001;
  const stepValues = stepInsertValues(shape);
  // cairn_0008_step_finished: a step recorded already finished carries its attempt 1.
  const finishedAttempt = shape.finished
    ? `
  elsif p_attempt_status is not null then
    ${finishedAttemptInsert(attempts)}`
    : '';
  const setTurn = shape.turn ? `\n      turn = coalesce(p_turn, s.turn),` : '';
  // The run row is share-locked: writers of one run proceed together, a claim (which updates the
  // row) waits for them, and they wait for a claim that got there first.
  const lockRun = `select r.fence, r.status into v_fence, v_status from ${runs} r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ${TERMINAL} then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;`;
  // Both return one row: the run's fence and status (no row: no run), whether the write happened,
  // and the step as it stands after the call (JSON, NULL when there is none).
  const head = (name: string, params: readonly RoutineParam[]) => `create or replace function ${q(name)}(${postgresSignature(params)})
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row ${steps}%rowtype;
begin
`;
  const insert = `${head(r.stepInsert, shape.insertParams)}  if p_async = 1 then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  ${lockRun}
  insert into ${steps} as s (${columns.join(', ')})
    values (${stepValues.join(', ')})
    on conflict (run_id, key_hash) do nothing
    returning s.* into v_row;
  if not found then
    return query select v_fence, v_status, false, row_to_json(s) from ${steps} s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    return;
  end if;
  if v_row.status = 'running' then
    insert into ${attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);${finishedAttempt}
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$`;
  const transition = `${head(r.stepTransition, shape.transitionParams)}  ${lockRun}
  update ${steps} as s set
      status = p_to_status,
      attempt = coalesce(p_to_attempt, s.attempt),
      output_json = case when p_set_output = 1 then p_output else s.output_json end,
      error_json = case when p_set_error = 1 then p_error else s.error_json end,
      wake_at = case p_wake when 1 then p_wake_at when 2 then null else s.wake_at end,
      child_run_id = coalesce(p_child_run_id, s.child_run_id),${setTurn}
      updated_at = p_now
    where s.run_id = p_run_id and s.key_hash = p_key_hash
      and s.status = any (string_to_array(p_from_statuses, ',')) and s.attempt = p_from_attempt
    returning s.* into v_row;
  if not found then
    -- The compare-and-set failed: report the step as it is (or no step at all).
    return query select v_fence, v_status, false, row_to_json(s) from ${steps} s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    if not found then
      return query select v_fence, v_status, false, null::json;
    end if;
    return;
  end if;
  if p_end_status is not null then
    update ${attempts} set status = p_end_status, ended_at = p_now,
        output_json = case when p_end_set_output = 1 then p_end_output else output_json end,
        error_json = case when p_end_set_error = 1 then p_end_error else error_json end
      where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
  end if;
  if p_start = 1 then
    -- After the end above, so closing and reopening one attempt number is ordered.
    insert into ${attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, v_row.attempt, v_row.step_key, v_row.seq, 'running', p_start_worker, p_now)
      on conflict (run_id, key_hash, attempt) do update set status = 'running', worker = excluded.worker,
        started_at = excluded.started_at, ended_at = null, output_json = null, error_json = null;
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$`;
  return [insert, transition];
}

/**
 * Drops the functions of `version`. A function is named by its argument types, and the two
 * versions differ in them (`p_turn`), so each version is dropped by its own signature.
 */
export function dropPostgresRoutines(names: TableNames, version: StepRoutineVersion): string[] {
  const r = routineNames(names.prefix);
  const shape = stepRoutineShape(version);
  return [
    `drop function if exists "${r.stepInsert}"(${postgresParamTypes(shape.insertParams).join(', ')})`,
    `drop function if exists "${r.stepTransition}"(${postgresParamTypes(shape.transitionParams).join(', ')})`,
  ];
}
