-- @migration cairn_0001_initial up
-- @query
create table "cairn_runs" ("id" text collate "C" not null, "workflow" text collate "C" not null, "version" text collate "C" not null, "input_json" text not null, "status" text not null, "output_json" text, "error_json" text, "parent_run_id" text collate "C", "parent_step_key" text, "idempotency_key" text, "idempotency_hash" text collate "C", "lease_owner" text, "lease_expires_at" bigint, "fence" bigint not null, "cancel_requested" smallint not null, "wake_at" bigint, "due_at" bigint, "created_at" bigint not null, "updated_at" bigint not null, constraint "cairn_runs_pk" primary key ("id"))
-- @query
create table "cairn_steps" ("run_id" text collate "C" not null, "key_hash" text collate "C" not null, "step_key" text not null, "name" text not null, "kind" text not null, "seq" integer not null, "status" text not null, "attempt" integer not null, "max_attempts" integer not null, "queued" smallint not null, "output_json" text, "error_json" text, "wake_at" bigint, "child_run_id" text collate "C", "created_at" bigint not null, "updated_at" bigint not null, constraint "cairn_steps_pk" primary key ("run_id", "key_hash"))
-- @query
create table "cairn_attempts" ("run_id" text collate "C" not null, "key_hash" text collate "C" not null, "attempt" integer not null, "step_key" text not null, "step_seq" integer not null, "status" text not null, "worker" text, "started_at" bigint not null, "ended_at" bigint, "output_json" text, "error_json" text, constraint "cairn_attempts_pk" primary key ("run_id", "key_hash", "attempt"))
-- @query
create table "cairn_state" ("run_id" text collate "C" not null, "key_hash" text collate "C" not null, "state_key" text not null, "value_json" text not null, "updated_at" bigint not null, constraint "cairn_state_pk" primary key ("run_id", "key_hash"))
-- @query
create table "cairn_events" ("run_id" text collate "C" not null, "name_hash" text collate "C" not null, "name" text not null, "payload_json" text not null, "delivered_at" bigint not null, constraint "cairn_events_pk" primary key ("run_id", "name_hash"))
-- @query
create table "cairn_versions" ("workflow" text collate "C" not null, "version" text collate "C" not null, "status" text not null, "descriptor_json" text not null, "created_at" bigint not null, "updated_at" bigint not null, constraint "cairn_versions_pk" primary key ("workflow", "version"))
-- @query
create index "cairn_runs_status_created" on "cairn_runs" ("status", "created_at", "id")
-- @query
create index "cairn_runs_workflow_created" on "cairn_runs" ("workflow", "created_at", "id")
-- @query
create index "cairn_runs_created" on "cairn_runs" ("created_at", "id")
-- @query
create unique index "cairn_runs_idempotency" on "cairn_runs" ("workflow", "idempotency_hash")
-- @query
create index "cairn_runs_due" on "cairn_runs" ("due_at", "id") where due_at is not null
-- @query
create index "cairn_steps_run_seq" on "cairn_steps" ("run_id", "seq")
-- @query
create index "cairn_attempts_history" on "cairn_attempts" ("run_id", "started_at", "step_seq", "attempt")
-- @migration cairn_0002_step_routines up
-- @query
create or replace function "cairn_step_insert"(p_run_id text, p_fence bigint, p_key_hash text, p_step_key text, p_name text, p_kind text, p_seq integer, p_status text, p_max_attempts integer, p_queued smallint, p_output text, p_error text, p_wake_at bigint, p_child_run_id text, p_worker text, p_now bigint, p_async smallint)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  if p_async = 1 then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  insert into "cairn_steps" as s (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at)
    values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now)
    on conflict (run_id, key_hash) do nothing
    returning s.* into v_row;
  if not found then
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    return;
  end if;
  if v_row.status = 'running' then
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @query
create or replace function "cairn_step_transition"(p_run_id text, p_fence bigint, p_key_hash text, p_from_statuses text, p_from_attempt integer, p_to_status text, p_to_attempt integer, p_set_output smallint, p_output text, p_set_error smallint, p_error text, p_wake smallint, p_wake_at bigint, p_child_run_id text, p_now bigint, p_end_status text, p_end_set_output smallint, p_end_output text, p_end_set_error smallint, p_end_error text, p_start smallint, p_start_worker text)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  update "cairn_steps" as s set
      status = p_to_status,
      attempt = coalesce(p_to_attempt, s.attempt),
      output_json = case when p_set_output = 1 then p_output else s.output_json end,
      error_json = case when p_set_error = 1 then p_error else s.error_json end,
      wake_at = case p_wake when 1 then p_wake_at when 2 then null else s.wake_at end,
      child_run_id = coalesce(p_child_run_id, s.child_run_id),
      updated_at = p_now
    where s.run_id = p_run_id and s.key_hash = p_key_hash
      and s.status = any (string_to_array(p_from_statuses, ',')) and s.attempt = p_from_attempt
    returning s.* into v_row;
  if not found then
    -- The compare-and-set failed: report the step as it is (or no step at all).
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    if not found then
      return query select v_fence, v_status, false, null::json;
    end if;
    return;
  end if;
  if p_end_status is not null then
    update "cairn_attempts" set status = p_end_status, ended_at = p_now,
        output_json = case when p_end_set_output = 1 then p_end_output else output_json end,
        error_json = case when p_end_set_error = 1 then p_end_error else error_json end
      where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
  end if;
  if p_start = 1 then
    -- After the end above, so closing and reopening one attempt number is ordered.
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, v_row.attempt, v_row.step_key, v_row.seq, 'running', p_start_worker, p_now)
      on conflict (run_id, key_hash, attempt) do update set status = 'running', worker = excluded.worker,
        started_at = excluded.started_at, ended_at = null, output_json = null, error_json = null;
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @migration cairn_0003_step_turn up
-- @query
alter table "cairn_steps" add column "turn" bigint
-- @query
drop function if exists "cairn_step_insert"(text, bigint, text, text, text, text, integer, text, integer, smallint, text, text, bigint, text, text, bigint, smallint)
-- @query
drop function if exists "cairn_step_transition"(text, bigint, text, text, integer, text, integer, smallint, text, smallint, text, smallint, bigint, text, bigint, text, smallint, text, smallint, text, smallint, text)
-- @query
create or replace function "cairn_step_insert"(p_run_id text, p_fence bigint, p_key_hash text, p_step_key text, p_name text, p_kind text, p_seq integer, p_status text, p_max_attempts integer, p_queued smallint, p_output text, p_error text, p_wake_at bigint, p_child_run_id text, p_turn bigint, p_worker text, p_now bigint, p_async smallint)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  if p_async = 1 then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  insert into "cairn_steps" as s (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at, turn)
    values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now, p_turn)
    on conflict (run_id, key_hash) do nothing
    returning s.* into v_row;
  if not found then
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    return;
  end if;
  if v_row.status = 'running' then
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @query
create or replace function "cairn_step_transition"(p_run_id text, p_fence bigint, p_key_hash text, p_from_statuses text, p_from_attempt integer, p_to_status text, p_to_attempt integer, p_set_output smallint, p_output text, p_set_error smallint, p_error text, p_wake smallint, p_wake_at bigint, p_child_run_id text, p_turn bigint, p_now bigint, p_end_status text, p_end_set_output smallint, p_end_output text, p_end_set_error smallint, p_end_error text, p_start smallint, p_start_worker text)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  update "cairn_steps" as s set
      status = p_to_status,
      attempt = coalesce(p_to_attempt, s.attempt),
      output_json = case when p_set_output = 1 then p_output else s.output_json end,
      error_json = case when p_set_error = 1 then p_error else s.error_json end,
      wake_at = case p_wake when 1 then p_wake_at when 2 then null else s.wake_at end,
      child_run_id = coalesce(p_child_run_id, s.child_run_id),
      turn = coalesce(p_turn, s.turn),
      updated_at = p_now
    where s.run_id = p_run_id and s.key_hash = p_key_hash
      and s.status = any (string_to_array(p_from_statuses, ',')) and s.attempt = p_from_attempt
    returning s.* into v_row;
  if not found then
    -- The compare-and-set failed: report the step as it is (or no step at all).
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    if not found then
      return query select v_fence, v_status, false, null::json;
    end if;
    return;
  end if;
  if p_end_status is not null then
    update "cairn_attempts" set status = p_end_status, ended_at = p_now,
        output_json = case when p_end_set_output = 1 then p_end_output else output_json end,
        error_json = case when p_end_set_error = 1 then p_end_error else error_json end
      where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
  end if;
  if p_start = 1 then
    -- After the end above, so closing and reopening one attempt number is ordered.
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, v_row.attempt, v_row.step_key, v_row.seq, 'running', p_start_worker, p_now)
      on conflict (run_id, key_hash, attempt) do update set status = 'running', worker = excluded.worker,
        started_at = excluded.started_at, ended_at = null, output_json = null, error_json = null;
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @migration cairn_0004_run_deadline up
-- @query
alter table "cairn_runs" add column "deadline" bigint
-- @query
alter table "cairn_runs" add column "cancel_reason" text
-- @migration cairn_0005_event_messages up
-- @query
create table "cairn_events_v5" ("run_id" text collate "C" not null, "name_hash" text collate "C" not null, "seq" integer not null, "name" text not null, "payload_json" text not null, "delivered_at" bigint not null, "idempotency_hash" text collate "C", "idempotency_key" text, constraint "cairn_events_v5_pk" primary key ("run_id", "name_hash", "seq"))
-- @query
insert into "cairn_events_v5" (run_id, name_hash, seq, name, payload_json, delivered_at)
    select run_id, name_hash, 1, name, payload_json, delivered_at from "cairn_events"
-- @query
drop table "cairn_events"
-- @query
alter table "cairn_events_v5" rename to "cairn_events"
-- @query
create unique index "cairn_events_idempotency" on "cairn_events" ("run_id", "idempotency_hash")
-- @migration cairn_0006_operations up
-- @query
alter table "cairn_runs" add column "forked_from_run_id" text collate "C"
-- @query
alter table "cairn_runs" add column "forked_from_step_key" text
-- @query
alter table "cairn_runs" add column "retries_json" text
-- @query
create index "cairn_runs_parent_created" on "cairn_runs" ("parent_run_id", "created_at", "id")
-- @query
create index "cairn_runs_status_updated" on "cairn_runs" ("status", "updated_at", "id")
-- @migration cairn_0007_run_trace_context up
-- @query
alter table "cairn_runs" add column "trace_context_json" text
-- @migration cairn_0008_step_finished up
-- @query
alter table "cairn_steps" add column "fence" bigint
-- @query
drop function if exists "cairn_step_insert"(text, bigint, text, text, text, text, integer, text, integer, smallint, text, text, bigint, text, bigint, text, bigint, smallint)
-- @query
drop function if exists "cairn_step_transition"(text, bigint, text, text, integer, text, integer, smallint, text, smallint, text, smallint, bigint, text, bigint, bigint, text, smallint, text, smallint, text, smallint, text)
-- @query
create or replace function "cairn_step_insert"(p_run_id text, p_fence bigint, p_key_hash text, p_step_key text, p_name text, p_kind text, p_seq integer, p_status text, p_max_attempts integer, p_queued smallint, p_output text, p_error text, p_wake_at bigint, p_child_run_id text, p_turn bigint, p_worker text, p_now bigint, p_attempt_status text, p_attempt_started_at bigint, p_attempt_output text, p_attempt_error text, p_async smallint)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  if p_async = 1 then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  insert into "cairn_steps" as s (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at, turn, fence)
    values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now, p_turn, p_fence)
    on conflict (run_id, key_hash) do nothing
    returning s.* into v_row;
  if not found then
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    return;
  end if;
  if v_row.status = 'running' then
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
  elsif p_attempt_status is not null then
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, p_attempt_status, p_worker, p_attempt_started_at, p_now, p_attempt_output, p_attempt_error);
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @query
create or replace function "cairn_step_transition"(p_run_id text, p_fence bigint, p_key_hash text, p_from_statuses text, p_from_attempt integer, p_to_status text, p_to_attempt integer, p_set_output smallint, p_output text, p_set_error smallint, p_error text, p_wake smallint, p_wake_at bigint, p_child_run_id text, p_turn bigint, p_now bigint, p_end_status text, p_end_set_output smallint, p_end_output text, p_end_set_error smallint, p_end_error text, p_start smallint, p_start_worker text)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  update "cairn_steps" as s set
      status = p_to_status,
      attempt = coalesce(p_to_attempt, s.attempt),
      output_json = case when p_set_output = 1 then p_output else s.output_json end,
      error_json = case when p_set_error = 1 then p_error else s.error_json end,
      wake_at = case p_wake when 1 then p_wake_at when 2 then null else s.wake_at end,
      child_run_id = coalesce(p_child_run_id, s.child_run_id),
      turn = coalesce(p_turn, s.turn),
      updated_at = p_now
    where s.run_id = p_run_id and s.key_hash = p_key_hash
      and s.status = any (string_to_array(p_from_statuses, ',')) and s.attempt = p_from_attempt
    returning s.* into v_row;
  if not found then
    -- The compare-and-set failed: report the step as it is (or no step at all).
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    if not found then
      return query select v_fence, v_status, false, null::json;
    end if;
    return;
  end if;
  if p_end_status is not null then
    update "cairn_attempts" set status = p_end_status, ended_at = p_now,
        output_json = case when p_end_set_output = 1 then p_end_output else output_json end,
        error_json = case when p_end_set_error = 1 then p_end_error else error_json end
      where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
  end if;
  if p_start = 1 then
    -- After the end above, so closing and reopening one attempt number is ordered.
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, v_row.attempt, v_row.step_key, v_row.seq, 'running', p_start_worker, p_now)
      on conflict (run_id, key_hash, attempt) do update set status = 'running', worker = excluded.worker,
        started_at = excluded.started_at, ended_at = null, output_json = null, error_json = null;
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @migration cairn_0010_schedules up
-- @query
create table "cairn_schedules" ("name" text collate "C" not null, "revision" bigint not null, "due_at" bigint, "record_json" text not null, constraint "cairn_schedules_pk" primary key ("name"))
-- @query
create index "cairn_schedules_due" on "cairn_schedules" ("due_at", "name") where due_at is not null
-- @migration cairn_0011_slots up
-- @query
drop table if exists "cairn_slot_waiters"
-- @query
drop table if exists "cairn_slots"
-- @query
create table "cairn_slots" ("key_hash" text collate "C" not null, "idx" integer not null, "holder" text, "expires_at" bigint not null, constraint "cairn_slots_pk" primary key ("key_hash", "idx")) 
-- @query
create table "cairn_slot_waiters" ("key_hash" text collate "C" not null, "holder_hash" text collate "C" not null, "holder" text collate "C" not null, "priority" integer not null, "queued_at" bigint not null, "expires_at" bigint not null, constraint "cairn_slot_waiters_pk" primary key ("key_hash", "holder_hash")) 
-- @query
create index "cairn_slot_waiters_line" on "cairn_slot_waiters" ("key_hash", "priority" desc, "queued_at")
-- @query
alter table "cairn_runs" add column "priority" integer
-- @query
create or replace function "cairn_slot_acquire"(p_key_hash text, p_holder text, p_holder_hash text, p_limit integer, p_expires_at bigint, p_now bigint, p_wait smallint, p_priority integer, p_queued_at bigint, p_wait_expires_at bigint)
returns table (acquired boolean, free_at bigint)
language plpgsql volatile as $fn$
declare
  v_rows integer;
  v_held integer;
  v_free_at bigint;
  v_free_idx integer;
  v_mine integer;
  v_waiting integer;
  v_ahead integer := 0;
begin
  perform 1 from "cairn_slots" s where s.key_hash = p_key_hash and s.idx = 0 for update;
  if not found then
    -- The key's first acquire makes its rows; a concurrent first acquire's rows are ignored.
    insert into "cairn_slots" (key_hash, idx, holder, expires_at)
      select p_key_hash, g, null, 0 from generate_series(0, p_limit - 1) g on conflict do nothing;
    perform 1 from "cairn_slots" s where s.key_hash = p_key_hash and s.idx = 0 for update;
  end if;
  select count(*) into v_waiting from "cairn_slot_waiters" w where w.key_hash = p_key_hash and w.holder_hash = p_holder_hash;
  if p_wait = 1 then
    select count(*) into v_ahead from "cairn_slot_waiters" w
      where w.key_hash = p_key_hash and w.holder_hash <> p_holder_hash and w.expires_at > p_now
        and (w.priority > p_priority or (w.priority = p_priority and (w.queued_at < p_queued_at or (w.queued_at = p_queued_at and w.holder < p_holder))));
  end if;
  for v_try in 1..8 loop
    select count(*), coalesce(sum(case when s.holder is not null and s.expires_at > p_now then 1 else 0 end), 0),
        min(case when s.holder is not null and s.expires_at > p_now then s.expires_at end),
        min(case when s.idx < p_limit and (s.holder is null or s.expires_at <= p_now) then s.idx end),
        max(case when s.holder = p_holder then s.idx end)
      into v_rows, v_held, v_free_at, v_free_idx, v_mine
      from "cairn_slots" s where s.key_hash = p_key_hash;
    if v_mine is not null then
      update "cairn_slots" s set expires_at = greatest(s.expires_at, p_expires_at) where s.key_hash = p_key_hash and s.idx = v_mine;
      if v_waiting > 0 then delete from "cairn_slot_waiters" w where w.key_hash = p_key_hash and (w.holder_hash = p_holder_hash or w.expires_at <= p_now); end if;
      return query select true, null::bigint;
      return;
    end if;
    if v_free_idx is null and v_rows < p_limit then
      -- The limit grew since the rows were made.
      insert into "cairn_slots" (key_hash, idx, holder, expires_at)
        select p_key_hash, g, null, 0 from generate_series(v_rows, p_limit - 1) g on conflict do nothing;
      continue;
    end if;
    if v_free_idx is null or p_limit - v_held <= v_ahead then
      if p_wait = 1 then
        insert into "cairn_slot_waiters" (key_hash, holder_hash, holder, priority, queued_at, expires_at)
          values (p_key_hash, p_holder_hash, p_holder, p_priority, p_queued_at, p_wait_expires_at)
          on conflict (key_hash, holder_hash) do update set priority = excluded.priority, queued_at = excluded.queued_at, expires_at = excluded.expires_at;
      end if;
      return query select false, case when p_limit - v_held <= 0 then v_free_at end;
      return;
    end if;
    update "cairn_slots" s set holder = p_holder, expires_at = p_expires_at
      where s.key_hash = p_key_hash and s.idx = v_free_idx and (s.holder is null or s.expires_at <= p_now);
    if found then
      if v_waiting > 0 then delete from "cairn_slot_waiters" w where w.key_hash = p_key_hash and (w.holder_hash = p_holder_hash or w.expires_at <= p_now); end if;
      return query select true, null::bigint;
      return;
    end if;
  end loop;
  raise exception 'slot_acquire: the free slot was taken 8 times in a row';
end
$fn$
-- @query
create or replace function "cairn_slot_release"(p_key_hash text, p_holder text, p_holder_hash text, p_now bigint)
returns table (next_holder text)
language plpgsql volatile as $fn$
begin
  perform 1 from "cairn_slots" s where s.key_hash = p_key_hash and s.idx = 0 for update;
  update "cairn_slots" s set holder = null, expires_at = 0 where s.key_hash = p_key_hash and s.holder = p_holder;
  delete from "cairn_slot_waiters" w where w.key_hash = p_key_hash and (w.holder_hash = p_holder_hash or w.expires_at <= p_now);
  return query select w.holder::text from "cairn_slot_waiters" w where w.key_hash = p_key_hash and w.expires_at > p_now
    order by w.priority desc, w.queued_at, w.holder limit 1;
end
$fn$
-- @migration cairn_0011_slots down
-- @query
drop function if exists "cairn_slot_acquire"(text, text, text, integer, bigint, bigint, smallint, integer, bigint, bigint)
-- @query
drop function if exists "cairn_slot_release"(text, text, text, bigint)
-- @query
drop table if exists "cairn_slot_waiters"
-- @query
drop table if exists "cairn_slots"
-- @query
alter table "cairn_runs" drop column "priority"
-- @migration cairn_0010_schedules down
-- @query
drop table if exists "cairn_schedules"
-- @migration cairn_0008_step_finished down
-- @query
drop function if exists "cairn_step_insert"(text, bigint, text, text, text, text, integer, text, integer, smallint, text, text, bigint, text, bigint, text, bigint, text, bigint, text, text, smallint)
-- @query
drop function if exists "cairn_step_transition"(text, bigint, text, text, integer, text, integer, smallint, text, smallint, text, smallint, bigint, text, bigint, bigint, text, smallint, text, smallint, text, smallint, text)
-- @query
create or replace function "cairn_step_insert"(p_run_id text, p_fence bigint, p_key_hash text, p_step_key text, p_name text, p_kind text, p_seq integer, p_status text, p_max_attempts integer, p_queued smallint, p_output text, p_error text, p_wake_at bigint, p_child_run_id text, p_turn bigint, p_worker text, p_now bigint, p_async smallint)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  if p_async = 1 then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  insert into "cairn_steps" as s (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at, turn)
    values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now, p_turn)
    on conflict (run_id, key_hash) do nothing
    returning s.* into v_row;
  if not found then
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    return;
  end if;
  if v_row.status = 'running' then
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @query
create or replace function "cairn_step_transition"(p_run_id text, p_fence bigint, p_key_hash text, p_from_statuses text, p_from_attempt integer, p_to_status text, p_to_attempt integer, p_set_output smallint, p_output text, p_set_error smallint, p_error text, p_wake smallint, p_wake_at bigint, p_child_run_id text, p_turn bigint, p_now bigint, p_end_status text, p_end_set_output smallint, p_end_output text, p_end_set_error smallint, p_end_error text, p_start smallint, p_start_worker text)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  update "cairn_steps" as s set
      status = p_to_status,
      attempt = coalesce(p_to_attempt, s.attempt),
      output_json = case when p_set_output = 1 then p_output else s.output_json end,
      error_json = case when p_set_error = 1 then p_error else s.error_json end,
      wake_at = case p_wake when 1 then p_wake_at when 2 then null else s.wake_at end,
      child_run_id = coalesce(p_child_run_id, s.child_run_id),
      turn = coalesce(p_turn, s.turn),
      updated_at = p_now
    where s.run_id = p_run_id and s.key_hash = p_key_hash
      and s.status = any (string_to_array(p_from_statuses, ',')) and s.attempt = p_from_attempt
    returning s.* into v_row;
  if not found then
    -- The compare-and-set failed: report the step as it is (or no step at all).
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    if not found then
      return query select v_fence, v_status, false, null::json;
    end if;
    return;
  end if;
  if p_end_status is not null then
    update "cairn_attempts" set status = p_end_status, ended_at = p_now,
        output_json = case when p_end_set_output = 1 then p_end_output else output_json end,
        error_json = case when p_end_set_error = 1 then p_end_error else error_json end
      where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
  end if;
  if p_start = 1 then
    -- After the end above, so closing and reopening one attempt number is ordered.
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, v_row.attempt, v_row.step_key, v_row.seq, 'running', p_start_worker, p_now)
      on conflict (run_id, key_hash, attempt) do update set status = 'running', worker = excluded.worker,
        started_at = excluded.started_at, ended_at = null, output_json = null, error_json = null;
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @query
alter table "cairn_steps" drop column "fence"
-- @migration cairn_0007_run_trace_context down
-- @query
alter table "cairn_runs" drop column "trace_context_json"
-- @migration cairn_0006_operations down
-- @query
drop index if exists "cairn_runs_parent_created"
-- @query
drop index if exists "cairn_runs_status_updated"
-- @query
alter table "cairn_runs" drop column "retries_json"
-- @query
alter table "cairn_runs" drop column "forked_from_step_key"
-- @query
alter table "cairn_runs" drop column "forked_from_run_id"
-- @migration cairn_0005_event_messages down
-- @query
create table "cairn_events_v1" ("run_id" text collate "C" not null, "name_hash" text collate "C" not null, "name" text not null, "payload_json" text not null, "delivered_at" bigint not null, constraint "cairn_events_v1_pk" primary key ("run_id", "name_hash"))
-- @query
insert into "cairn_events_v1" (run_id, name_hash, name, payload_json, delivered_at)
    select run_id, name_hash, name, payload_json, delivered_at from "cairn_events" where seq = 1
-- @query
drop table "cairn_events"
-- @query
alter table "cairn_events_v1" rename to "cairn_events"
-- @migration cairn_0004_run_deadline down
-- @query
alter table "cairn_runs" drop column "cancel_reason"
-- @query
alter table "cairn_runs" drop column "deadline"
-- @migration cairn_0003_step_turn down
-- @query
drop function if exists "cairn_step_insert"(text, bigint, text, text, text, text, integer, text, integer, smallint, text, text, bigint, text, bigint, text, bigint, smallint)
-- @query
drop function if exists "cairn_step_transition"(text, bigint, text, text, integer, text, integer, smallint, text, smallint, text, smallint, bigint, text, bigint, bigint, text, smallint, text, smallint, text, smallint, text)
-- @query
create or replace function "cairn_step_insert"(p_run_id text, p_fence bigint, p_key_hash text, p_step_key text, p_name text, p_kind text, p_seq integer, p_status text, p_max_attempts integer, p_queued smallint, p_output text, p_error text, p_wake_at bigint, p_child_run_id text, p_worker text, p_now bigint, p_async smallint)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  if p_async = 1 then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  insert into "cairn_steps" as s (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at)
    values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now)
    on conflict (run_id, key_hash) do nothing
    returning s.* into v_row;
  if not found then
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    return;
  end if;
  if v_row.status = 'running' then
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @query
create or replace function "cairn_step_transition"(p_run_id text, p_fence bigint, p_key_hash text, p_from_statuses text, p_from_attempt integer, p_to_status text, p_to_attempt integer, p_set_output smallint, p_output text, p_set_error smallint, p_error text, p_wake smallint, p_wake_at bigint, p_child_run_id text, p_now bigint, p_end_status text, p_end_set_output smallint, p_end_output text, p_end_set_error smallint, p_end_error text, p_start smallint, p_start_worker text)
returns table (r_fence bigint, r_status text, done boolean, step json)
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
  v_row "cairn_steps"%rowtype;
begin
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return query select v_fence, v_status, false, null::json;
    return;
  end if;
  update "cairn_steps" as s set
      status = p_to_status,
      attempt = coalesce(p_to_attempt, s.attempt),
      output_json = case when p_set_output = 1 then p_output else s.output_json end,
      error_json = case when p_set_error = 1 then p_error else s.error_json end,
      wake_at = case p_wake when 1 then p_wake_at when 2 then null else s.wake_at end,
      child_run_id = coalesce(p_child_run_id, s.child_run_id),
      updated_at = p_now
    where s.run_id = p_run_id and s.key_hash = p_key_hash
      and s.status = any (string_to_array(p_from_statuses, ',')) and s.attempt = p_from_attempt
    returning s.* into v_row;
  if not found then
    -- The compare-and-set failed: report the step as it is (or no step at all).
    return query select v_fence, v_status, false, row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash;
    if not found then
      return query select v_fence, v_status, false, null::json;
    end if;
    return;
  end if;
  if p_end_status is not null then
    update "cairn_attempts" set status = p_end_status, ended_at = p_now,
        output_json = case when p_end_set_output = 1 then p_end_output else output_json end,
        error_json = case when p_end_set_error = 1 then p_end_error else error_json end
      where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
  end if;
  if p_start = 1 then
    -- After the end above, so closing and reopening one attempt number is ordered.
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, v_row.attempt, v_row.step_key, v_row.seq, 'running', p_start_worker, p_now)
      on conflict (run_id, key_hash, attempt) do update set status = 'running', worker = excluded.worker,
        started_at = excluded.started_at, ended_at = null, output_json = null, error_json = null;
  end if;
  return query select v_fence, v_status, true, row_to_json(v_row);
end
$fn$
-- @query
alter table "cairn_steps" drop column "turn"
-- @migration cairn_0002_step_routines down
-- @query
drop function if exists "cairn_step_insert"(text, bigint, text, text, text, text, integer, text, integer, smallint, text, text, bigint, text, bigint, text, bigint, text, bigint, text, text, smallint)
-- @query
drop function if exists "cairn_step_transition"(text, bigint, text, text, integer, text, integer, smallint, text, smallint, text, smallint, bigint, text, bigint, bigint, text, smallint, text, smallint, text, smallint, text)
-- @query
drop function if exists "cairn_step_insert"(text, bigint, text, text, text, text, integer, text, integer, smallint, text, text, bigint, text, bigint, text, bigint, smallint)
-- @query
drop function if exists "cairn_step_transition"(text, bigint, text, text, integer, text, integer, smallint, text, smallint, text, smallint, bigint, text, bigint, bigint, text, smallint, text, smallint, text, smallint, text)
-- @query
drop function if exists "cairn_step_insert"(text, bigint, text, text, text, text, integer, text, integer, smallint, text, text, bigint, text, text, bigint, smallint)
-- @query
drop function if exists "cairn_step_transition"(text, bigint, text, text, integer, text, integer, smallint, text, smallint, text, smallint, bigint, text, bigint, text, smallint, text, smallint, text, smallint, text)
-- @migration cairn_0001_initial down
-- @query
drop table if exists "cairn_attempts"
-- @query
drop table if exists "cairn_steps"
-- @query
drop table if exists "cairn_state"
-- @query
drop table if exists "cairn_events"
-- @query
drop table if exists "cairn_versions"
-- @query
drop table if exists "cairn_runs"
-- @migration cairn_0012_step_insert_v2 up
-- @query
create or replace function "cairn_step_insert_v2"(p_run_id text, p_fence bigint, p_key_hash text, p_step_key text, p_name text, p_kind text, p_seq integer, p_status text, p_max_attempts integer, p_queued smallint, p_output text, p_error text, p_wake_at bigint, p_child_run_id text, p_turn bigint, p_worker text, p_now bigint, p_attempt_status text, p_attempt_started_at bigint, p_attempt_output text, p_attempt_error text, p_async smallint)
returns json
language plpgsql volatile as $fn$
declare
  v_fence bigint;
  v_status text;
begin
  if p_async = 1 then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  -- Share-locked as step_insert does: writers of one run proceed together, a claim (which updates
  -- the row) waits for them, and they wait for a claim that got there first.
  select r.fence, r.status into v_fence, v_status from "cairn_runs" r where r.id = p_run_id for share;
  if not found then
    return '{}'::json;
  end if;
  if (p_fence is not null and v_fence <> p_fence) or v_status in ('completed', 'failed', 'cancelled') then
    return json_build_object('fence', v_fence, 'status', v_status);
  end if;
  insert into "cairn_steps" (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at, turn, fence)
    values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now, p_turn, p_fence)
    on conflict (run_id, key_hash) do nothing;
  if not found then
    return json_build_object('fence', v_fence, 'status', v_status,
      'step', (select row_to_json(s) from "cairn_steps" s where s.run_id = p_run_id and s.key_hash = p_key_hash));
  end if;
  if p_status = 'running' then
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
  elsif p_attempt_status is not null then
    insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, p_attempt_status, p_worker, p_attempt_started_at, p_now, p_attempt_output, p_attempt_error);
  end if;
  return null;
end
$fn$
-- @migration cairn_0012_step_insert_v2 down
-- @query
drop function if exists "cairn_step_insert_v2"(text, bigint, text, text, text, text, integer, text, integer, smallint, text, text, bigint, text, bigint, text, bigint, text, bigint, text, text, smallint)
-- @migration cairn_0013_streams up
-- @query
create table "cairn_stream_entries" ("run_id" text collate "C" not null, "stream_hash" text collate "C" not null, "idx" bigint not null, "stream" text not null, "data_json" text, "closed" smallint not null, "written_at" bigint not null, constraint "cairn_stream_entries_pk" primary key ("run_id", "stream_hash", "idx"))
-- @migration cairn_0013_streams down
-- @query
drop table if exists "cairn_stream_entries"
-- @migration cairn_0014_runs_workflow_status up
-- @query
create index "cairn_runs_workflow_status_created" on "cairn_runs" ("workflow", "status", "created_at", "id")
-- @migration cairn_0014_runs_workflow_status down
-- @query
drop index if exists "cairn_runs_workflow_status_created"
-- @migration cairn_0015_run_pause up
-- @query
alter table "cairn_runs" add column "paused_json" text
-- @query
create table "cairn_pauses" ("workflow" text collate "C" not null, "record_json" text not null, constraint "cairn_pauses_pk" primary key ("workflow"))
-- @migration cairn_0015_run_pause down
-- @query
drop table if exists "cairn_pauses"
-- @query
alter table "cairn_runs" drop column "paused_json"
-- @migration cairn_0016_bulk_operations up
-- @query
create table "cairn_bulk_operations" ("id" text collate "C" not null, "revision" bigint not null, "record_json" text not null, constraint "cairn_bulk_operations_pk" primary key ("id"))
-- @migration cairn_0016_bulk_operations down
-- @query
drop table if exists "cairn_bulk_operations"
-- @migration cairn_0017_run_tags up
-- @query
alter table "cairn_runs" add column "tags_json" text
-- @query
alter table "cairn_runs" add column "tag_writes" integer
-- @query
create table "cairn_run_tags" ("run_id" text collate "C" not null, "tag_hash" text collate "C" not null, "tag_key" text not null, "tag_value" text not null, "run_created_at" bigint not null, constraint "cairn_run_tags_pk" primary key ("run_id", "tag_hash"))
-- @query
create index "cairn_run_tags_find" on "cairn_run_tags" ("tag_hash", "run_created_at", "run_id")
-- @migration cairn_0017_run_tags down
-- @query
drop table if exists "cairn_run_tags"
-- @query
alter table "cairn_runs" drop column "tag_writes"
-- @query
alter table "cairn_runs" drop column "tags_json"
-- @migration cairn_0018_run_wake_promise up
-- @query
alter table "cairn_runs" add column "promised_at" bigint
-- @query
alter table "cairn_runs" add column "promises" integer
-- @migration cairn_0018_run_wake_promise down
-- @query
alter table "cairn_runs" drop column "promises"
-- @query
alter table "cairn_runs" drop column "promised_at"
