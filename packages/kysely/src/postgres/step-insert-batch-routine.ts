import { STEP_INSERT_PARAMS, stepInsertValues, stepRoutineShape } from '../routines/params.js';
import { postgresParamTypes } from './param-types.js';
import { STEP_COLUMNS, type TableNames } from '../schema/tables.js';

/** The name of the batched step insert function of `cairn_0018_step_insert_batch` for a table prefix. */
export const stepInsertBatchName = (prefix: string): string => `${prefix}step_insert_batch`;

// The function's argument types: one array per parameter of `step_insert_v2`, in its order.
const arrayTypes = (): string[] => postgresParamTypes(STEP_INSERT_PARAMS).map((type) => `${type}[]`);

// The column each parameter becomes once the arrays are unnested side by side (`p_x` → `c_x`):
// other names than the parameters', so no reference in the body is ambiguous.
const columnOf = (param: string): string => `c_${param.slice(2)}`;

/**
 * The DDL of `<prefix>step_insert_batch` (`cairn_0018_step_insert_batch`): N step inserts in one
 * set-based call, each with exactly the checks, writes and answer of `<prefix>step_insert_v2`
 * (`cairn_0012_step_insert_v2`) — the run row share-locked, its fence and status checked, the step
 * inserted unless its key exists, attempt 1 opened (running) or recorded (finished) — for the
 * i-th elements of the 22 array arguments, returning one row `(i, r)` per write with `r` the JSON
 * value `step_insert_v2` returns for it (NULL: written; `{}`: no run; `{fence, status}`: refused;
 * `{fence, status, step}`: the key exists, `step` its row).
 *
 * Set-based rather than one function call per row: the runs' rows are share-locked by one
 * `SELECT … ORDER BY id FOR SHARE` (in id order, so two batches never wait for each other in a
 * circle), the steps inserted by one `INSERT … SELECT … ON CONFLICT DO NOTHING` and their attempts
 * by one more. A PL/pgSQL function, because its statements keep their plans per connection where
 * the same top-level statement was planned again on every execution; and always the generic plan
 * (`plan_cache_mode`, PostgreSQL 12+), which measured 13 % less server CPU per write than the
 * planner's own choice at 8 writes and the same at 64. Its fixed cost per call is higher than N
 * calls' (one call of 2 writes: ~85 µs more), its cost per write lower (−8 % at 8 writes, −19 % at
 * 64), so the store sends it for 8 writes or more (decision 76).
 *
 * The caller sends no two writes of one (run, key) in one call (the one INSERT could not tell them
 * apart; the store sends such a group as N calls of `step_insert_v2`). The existing-step answers
 * are read by a second statement, after the insert, so that a step another transaction committed
 * while this one waited for its key is found (as `step_insert_v2`'s own later statement finds it).
 * Commits with `synchronous_commit = off` only when every write is a running step's start
 * (`p_async` all 1), as a statement of N calls did.
 */
export function postgresStepInsertBatch(names: TableNames): string[] {
  const q = (id: string) => `"${id}"`;
  const params = STEP_INSERT_PARAMS.map(([name]) => name);
  const types = arrayTypes();
  const c = (param: string) => `t.${columnOf(param)}`;
  const terminal = `('completed', 'failed', 'cancelled')`;
  // The step columns' values as step_insert_v2 writes them, each parameter read from its column.
  const stepValues = stepInsertValues(stepRoutineShape('0008')).map((v) => (v.startsWith('p_') ? c(v) : v));
  if (stepValues.length !== STEP_COLUMNS.length) throw new Error('step_insert_batch: one value per step column');
  const running = `${c('p_status')} = 'running'`;
  return [
    `create or replace function ${q(stepInsertBatchName(names.prefix))}(${params.map((name, i) => `${name} ${types[i]}`).join(', ')})
returns table (i bigint, r json)
language plpgsql volatile
set plan_cache_mode = force_generic_plan
as $fn$
#variable_conflict use_column
declare
  v_ord integer[];
  v_found boolean[];
  v_fence bigint[];
  v_status text[];
  v_written boolean[];
begin
  if 0 <> all(p_async) then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  with t as (
    select * from unnest(${params.join(', ')}) with ordinality as t(${params.map(columnOf).join(', ')}, c_ord)
  ),
  -- Share-locked as step_insert_v2 does, in id order: writers of one run proceed together, a claim
  -- (which updates the row) waits for them, and they wait for a claim that got there first.
  k as (
    select x.id, x.fence, x.status from ${q(names.runs)} x where x.id = any(p_run_id) order by x.id for share
  ),
  ok as (
    select t.* from t join k on k.id = ${c('p_run_id')}
    where not ((${c('p_fence')} is not null and k.fence <> ${c('p_fence')}) or k.status in ${terminal})
  ),
  s as (
    insert into ${q(names.steps)} (${STEP_COLUMNS.join(', ')})
      select ${stepValues.join(', ')} from ok t
      on conflict (run_id, key_hash) do nothing
      returning run_id, key_hash
  ),
  a as (
    insert into ${q(names.attempts)} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
      select ${c('p_run_id')}, ${c('p_key_hash')}, 1, ${c('p_step_key')}, ${c('p_seq')},
        case when ${running} then 'running' else ${c('p_attempt_status')} end, ${c('p_worker')},
        case when ${running} then ${c('p_now')} else ${c('p_attempt_started_at')} end,
        case when ${running} then null else ${c('p_now')} end,
        case when ${running} then null else ${c('p_attempt_output')} end,
        case when ${running} then null else ${c('p_attempt_error')} end
      from ok t join s on s.run_id = ${c('p_run_id')} and s.key_hash = ${c('p_key_hash')}
      where ${running} or ${c('p_attempt_status')} is not null
  )
  select array_agg(t.c_ord::integer order by t.c_ord), array_agg(k.id is not null order by t.c_ord), array_agg(k.fence order by t.c_ord),
      array_agg(k.status order by t.c_ord), array_agg(s.run_id is not null order by t.c_ord)
    into v_ord, v_found, v_fence, v_status, v_written
    from t left join k on k.id = ${c('p_run_id')} left join s on s.run_id = ${c('p_run_id')} and s.key_hash = ${c('p_key_hash')};
  return query
    select w.ord::bigint, case
        when not w.found then '{}'::json
        when (p_fence[w.ord] is not null and w.fence <> p_fence[w.ord]) or w.status in ${terminal} then json_build_object('fence', w.fence, 'status', w.status)
        when w.written then null::json
        else json_build_object('fence', w.fence, 'status', w.status,
          'step', (select row_to_json(x) from ${q(names.steps)} x where x.run_id = p_run_id[w.ord] and x.key_hash = p_key_hash[w.ord]))
      end
    from unnest(v_ord, v_found, v_fence, v_status, v_written) as w(ord, found, fence, status, written);
end
$fn$`,
  ];
}

/** Drops `<prefix>step_insert_batch` (the down of `cairn_0018_step_insert_batch`). */
export function dropPostgresStepInsertBatch(names: TableNames): string[] {
  return [`drop function if exists "${stepInsertBatchName(names.prefix)}"(${arrayTypes().join(', ')})`];
}
