import { STEP_COLUMNS, STEP_COLUMNS_0001, STEP_COLUMNS_0003, type TableNames } from '../schema/tables.js';
import { BEGIN_TRANSACTION, TERMINAL, procedureHead } from './procedure-parts.js';
import { mysqlRunRoutines } from './run-routines.js';
import { finishedAttemptInsert, routineNames, stepInsertValues, stepRoutineShape, type StepRoutineVersion } from '../routines/params.js';
import { STATE_SET_PARAMS, mysqlRunRoutineNames } from './run-params.js';

/**
 * The stored procedures behind `steps.insert` and `steps.transition` on MySQL/MariaDB: the whole
 * transaction (lock the run row, check fence and status, write the step and its attempt records,
 * read the result back, commit) in ONE call, i.e. one round trip instead of five statements.
 * Only the run row is locked (`FOR UPDATE`): no locking read ever touches a step that does not
 * exist yet, so concurrent inserts of different runs take no gap locks and cannot deadlock on
 * them. Each returns one result set: `r_fence`, `r_status` (NULL when the run does not exist),
 * `done` (1 when the write happened) and the step's columns.
 *
 * `version` picks the procedures of one migration (see `StepRoutineVersion`): `'0003'` also
 * stores `turn` (inserted as given, set by a transition when `p_turn` is not NULL). Created after
 * `dropMysqlStepRoutines` (MySQL has no `create or replace procedure`).
 */
export function mysqlStepRoutines(names: TableNames, collation: string, version: StepRoutineVersion): string[] {
  const r = routineNames(names.prefix);
  const shape = stepRoutineShape(version);
  const q = (id: string) => `\`${id}\``;
  const steps = q(names.steps);
  const attempts = q(names.attempts);
  const { head, writable } = runLock(names);
  const columns = shape.finished ? STEP_COLUMNS : shape.turn ? STEP_COLUMNS_0003 : STEP_COLUMNS_0001;
  const setTurn = shape.turn ? `\n          turn = coalesce(p_turn, turn),` : '';
  const result = `select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join ${steps} s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;`;
  const stepValues = stepInsertValues(shape);
  // cairn_0008_step_finished: a step recorded already finished carries its attempt 1.
  const finishedAttempt = shape.finished
    ? `
        elseif p_attempt_status is not null then
          ${finishedAttemptInsert(attempts)}`
    : '';
  const insert = `${procedureHead(r.stepInsert, shape.insertParams, collation)}
  ${head}
  if ${writable} then
    begin
      declare v_duplicate integer default 0;
      -- The key exists: nothing is written and the existing step is returned.
      declare continue handler for 1062 set v_duplicate = 1;
      insert into ${steps} (${columns.join(', ')}) values (${stepValues.join(', ')});
      if v_duplicate = 0 then
        set v_done = 1;
        if p_status = 'running' then
          insert into ${attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
            values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);${finishedAttempt}
        end if;
      end if;
    end;
  end if;
  ${result}
end`;
  const transition = `${procedureHead(r.stepTransition, shape.transitionParams, collation)}
  ${head}
  if ${writable} then
    -- A plain read: the run lock is held, so no other writer of this run can change the step now.
    select count(*) into v_done from ${steps}
      where run_id = p_run_id and key_hash = p_key_hash and find_in_set(status, p_from_statuses) > 0 and attempt = p_from_attempt;
    if v_done = 1 then
      update ${steps} set
          status = p_to_status,
          attempt = coalesce(p_to_attempt, attempt),
          output_json = if(p_set_output = 1, p_output, output_json),
          error_json = if(p_set_error = 1, p_error, error_json),
          wake_at = case p_wake when 1 then p_wake_at when 2 then null else wake_at end,
          child_run_id = coalesce(p_child_run_id, child_run_id),${setTurn}
          updated_at = p_now
        where run_id = p_run_id and key_hash = p_key_hash;
      if p_end_status is not null then
        update ${attempts} set status = p_end_status, ended_at = p_now,
            output_json = if(p_end_set_output = 1, p_end_output, output_json),
            error_json = if(p_end_set_error = 1, p_end_error, error_json)
          where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
      end if;
      if p_start = 1 then
        -- After the end above, so closing and reopening one attempt number is ordered.
        insert into ${attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
          select run_id, key_hash, attempt, step_key, seq, 'running', p_start_worker, p_now from ${steps}
          where run_id = p_run_id and key_hash = p_key_hash
          on duplicate key update status = 'running', worker = p_start_worker, started_at = p_now,
            ended_at = null, output_json = null, error_json = null;
      end if;
    end if;
  end if;
  ${result}
end`;
  return [insert, transition];
}

/** The start every procedure of a run shares: lock the run row, and the test that it is writable. */
function runLock(names: TableNames): { head: string; writable: string } {
  const head = `declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  ${BEGIN_TRANSACTION}
  select fence, status into v_fence, v_status from \`${names.runs}\` where id = p_run_id for update;`;
  const writable = `v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ${TERMINAL}`;
  return { head, writable };
}

/**
 * Every procedure `cairn_0002_step_routines` creates on MySQL/MariaDB: the step procedures of
 * `version`, `state_set` and the run procedures (dropped first, so a re-run replaces them).
 */
export function mysqlRoutines(names: TableNames, collation: string, version: StepRoutineVersion): string[] {
  const q = (id: string) => `\`${id}\``;
  const runs = q(names.runs);
  const { head, writable } = runLock(names);
  // One (run, key) row upserted, never the whole state: writers of different keys never lose each
  // other's values; the run row's lock orders the state writes of one run.
  const stateSet = `${procedureHead(mysqlRunRoutineNames(names.prefix).stateSet, STATE_SET_PARAMS, collation)}
  ${head}
  if ${writable} then
    insert into ${q(names.state)} (run_id, key_hash, state_key, value_json, updated_at)
      values (p_run_id, p_key_hash, p_state_key, p_value, p_now)
      on duplicate key update value_json = p_value, updated_at = p_now;
    update ${runs} set updated_at = p_now where id = p_run_id;
    set v_done = 1;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done;
  commit;
end`;
  return [...dropMysqlRoutines(names), ...mysqlStepRoutines(names, collation, version), stateSet, ...mysqlRunRoutines(names, collation)];
}

/** Drops the two step procedures (before they are created again in another version). */
export function dropMysqlStepRoutines(names: TableNames): string[] {
  const r = routineNames(names.prefix);
  return [r.stepInsert, r.stepTransition].map((name) => `drop procedure if exists \`${name}\``);
}

/** Drops the procedures (the down migration, and before a re-create). */
export function dropMysqlRoutines(names: TableNames): string[] {
  const r = { ...routineNames(names.prefix), ...mysqlRunRoutineNames(names.prefix) };
  return [r.stepInsert, r.stepTransition, r.runClaim, r.runRenew, r.runTransition, r.runRequestCancel, r.stateSet].map(
    (name) => `drop procedure if exists \`${name}\``,
  );
}
