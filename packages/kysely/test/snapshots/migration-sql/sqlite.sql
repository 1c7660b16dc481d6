-- @migration cairn_0001_initial up
-- @query
create table "cairn_runs" ("id" text not null, "workflow" text not null, "version" text not null, "input_json" text not null, "status" text not null, "output_json" text, "error_json" text, "parent_run_id" text, "parent_step_key" text, "idempotency_key" text, "idempotency_hash" text, "lease_owner" text, "lease_expires_at" integer, "fence" integer not null, "cancel_requested" integer not null, "wake_at" integer, "due_at" integer, "created_at" integer not null, "updated_at" integer not null, constraint "cairn_runs_pk" primary key ("id"))
-- @query
create table "cairn_steps" ("run_id" text not null, "key_hash" text not null, "step_key" text not null, "name" text not null, "kind" text not null, "seq" integer not null, "status" text not null, "attempt" integer not null, "max_attempts" integer not null, "queued" integer not null, "output_json" text, "error_json" text, "wake_at" integer, "child_run_id" text, "created_at" integer not null, "updated_at" integer not null, constraint "cairn_steps_pk" primary key ("run_id", "key_hash"))
-- @query
create table "cairn_attempts" ("run_id" text not null, "key_hash" text not null, "attempt" integer not null, "step_key" text not null, "step_seq" integer not null, "status" text not null, "worker" text, "started_at" integer not null, "ended_at" integer, "output_json" text, "error_json" text, constraint "cairn_attempts_pk" primary key ("run_id", "key_hash", "attempt"))
-- @query
create table "cairn_state" ("run_id" text not null, "key_hash" text not null, "state_key" text not null, "value_json" text not null, "updated_at" integer not null, constraint "cairn_state_pk" primary key ("run_id", "key_hash"))
-- @query
create table "cairn_events" ("run_id" text not null, "name_hash" text not null, "name" text not null, "payload_json" text not null, "delivered_at" integer not null, constraint "cairn_events_pk" primary key ("run_id", "name_hash"))
-- @query
create table "cairn_versions" ("workflow" text not null, "version" text not null, "status" text not null, "descriptor_json" text not null, "created_at" integer not null, "updated_at" integer not null, constraint "cairn_versions_pk" primary key ("workflow", "version"))
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
alter table "cairn_steps" add column start_worker text
-- @query
alter table "cairn_steps" add column end_status text
-- @query
alter table "cairn_steps" add column end_output_json text
-- @query
alter table "cairn_steps" add column end_error_json text
-- @query
create trigger "cairn_steps_open_attempt" after insert on "cairn_steps" when new.status = 'running'
begin
  insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
    values (new.run_id, new.key_hash, 1, new.step_key, new.seq, 'running', new.start_worker, new.created_at);
end
-- @query
create trigger "cairn_steps_attempts" after update of end_status, start_worker on "cairn_steps"
begin
  update "cairn_attempts" set status = new.end_status, ended_at = new.updated_at,
      output_json = coalesce(new.end_output_json, output_json), error_json = coalesce(new.end_error_json, error_json)
    where new.end_status is not null and run_id = old.run_id and key_hash = old.key_hash and attempt = old.attempt;
  insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
    select new.run_id, new.key_hash, new.attempt, new.step_key, new.seq, 'running', new.start_worker, new.updated_at
    where new.start_worker is not null
    on conflict (run_id, key_hash, attempt) do update set status = 'running', worker = excluded.worker,
      started_at = excluded.started_at, ended_at = null, output_json = null, error_json = null;
end
-- @migration cairn_0003_step_turn up
-- @query
alter table "cairn_steps" add column "turn" integer
-- @migration cairn_0004_run_deadline up
-- @query
alter table "cairn_runs" add column "deadline" integer
-- @query
alter table "cairn_runs" add column "cancel_reason" text
-- @migration cairn_0005_event_messages up
-- @query
create table "cairn_events_v5" ("run_id" text not null, "name_hash" text not null, "seq" integer not null, "name" text not null, "payload_json" text not null, "delivered_at" integer not null, "idempotency_hash" text, "idempotency_key" text, constraint "cairn_events_v5_pk" primary key ("run_id", "name_hash", "seq"))
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
alter table "cairn_runs" add column "forked_from_run_id" text
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
alter table "cairn_steps" add column "fence" integer
-- @query
alter table "cairn_steps" add column start_at integer
-- @query
create trigger "cairn_steps_finished_attempt" after insert on "cairn_steps" when new.end_status is not null
begin
  insert into "cairn_attempts" (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
    values (new.run_id, new.key_hash, 1, new.step_key, new.seq, new.end_status, new.start_worker, new.start_at, new.created_at, new.end_output_json, new.end_error_json);
end
-- @migration cairn_0010_schedules up
-- @query
create table "cairn_schedules" ("name" text not null, "revision" integer not null, "due_at" integer, "record_json" text not null, constraint "cairn_schedules_pk" primary key ("name"))
-- @query
create index "cairn_schedules_due" on "cairn_schedules" ("due_at", "name") where due_at is not null
-- @migration cairn_0011_slots up
-- @query
drop table if exists "cairn_slot_waiters"
-- @query
drop table if exists "cairn_slots"
-- @query
create table "cairn_slots" ("key_hash" text not null, "idx" integer not null, "holder" text, "expires_at" integer not null, constraint "cairn_slots_pk" primary key ("key_hash", "idx")) 
-- @query
create table "cairn_slot_waiters" ("key_hash" text not null, "holder_hash" text not null, "holder" text not null, "priority" integer not null, "queued_at" integer not null, "expires_at" integer not null, constraint "cairn_slot_waiters_pk" primary key ("key_hash", "holder_hash")) 
-- @query
create index "cairn_slot_waiters_line" on "cairn_slot_waiters" ("key_hash", "priority" desc, "queued_at")
-- @query
alter table "cairn_runs" add column "priority" integer
-- @migration cairn_0011_slots down
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
drop trigger if exists "cairn_steps_finished_attempt"
-- @query
alter table "cairn_steps" drop column start_at
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
create table "cairn_events_v1" ("run_id" text not null, "name_hash" text not null, "name" text not null, "payload_json" text not null, "delivered_at" integer not null, constraint "cairn_events_v1_pk" primary key ("run_id", "name_hash"))
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
alter table "cairn_steps" drop column "turn"
-- @migration cairn_0002_step_routines down
-- @query
drop trigger if exists "cairn_steps_finished_attempt"
-- @query
drop trigger if exists "cairn_steps_open_attempt"
-- @query
drop trigger if exists "cairn_steps_attempts"
-- @query
alter table "cairn_steps" drop column start_worker
-- @query
alter table "cairn_steps" drop column end_status
-- @query
alter table "cairn_steps" drop column end_output_json
-- @query
alter table "cairn_steps" drop column end_error_json
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
-- @migration cairn_0012_step_insert_v2 down
-- @migration cairn_0013_streams up
-- @query
create table "cairn_stream_entries" ("run_id" text not null, "stream_hash" text not null, "idx" integer not null, "stream" text not null, "data_json" text, "closed" integer not null, "written_at" integer not null, constraint "cairn_stream_entries_pk" primary key ("run_id", "stream_hash", "idx"))
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
create table "cairn_pauses" ("workflow" text not null, "record_json" text not null, constraint "cairn_pauses_pk" primary key ("workflow"))
-- @migration cairn_0015_run_pause down
-- @query
drop table if exists "cairn_pauses"
-- @query
alter table "cairn_runs" drop column "paused_json"
-- @migration cairn_0016_bulk_operations up
-- @query
create table "cairn_bulk_operations" ("id" text not null, "revision" integer not null, "record_json" text not null, constraint "cairn_bulk_operations_pk" primary key ("id"))
-- @migration cairn_0016_bulk_operations down
-- @query
drop table if exists "cairn_bulk_operations"
-- @migration cairn_0017_run_tags up
-- @query
alter table "cairn_runs" add column "tags_json" text
-- @query
alter table "cairn_runs" add column "tag_writes" integer
-- @query
create table "cairn_run_tags" ("run_id" text not null, "tag_hash" text not null, "tag_key" text not null, "tag_value" text not null, "run_created_at" integer not null, constraint "cairn_run_tags_pk" primary key ("run_id", "tag_hash"))
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
alter table "cairn_runs" add column "promised_at" integer
-- @query
alter table "cairn_runs" add column "promises" integer
-- @migration cairn_0018_run_wake_promise down
-- @query
alter table "cairn_runs" drop column "promises"
-- @query
alter table "cairn_runs" drop column "promised_at"
