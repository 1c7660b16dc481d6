-- @migration cairn_0001_initial up
-- @query
select version() as v
-- @query
create table `cairn_runs` (`id` varchar(128) not null, `workflow` varchar(255) not null, `version` varchar(255) not null, `input_json` longtext not null, `status` varchar(16) not null, `output_json` longtext, `error_json` longtext, `parent_run_id` varchar(128), `parent_step_key` text, `idempotency_key` text, `idempotency_hash` char(64) character set ascii collate ascii_bin, `lease_owner` text, `lease_expires_at` bigint, `fence` bigint not null, `cancel_requested` smallint not null, `wake_at` bigint, `due_at` bigint, `created_at` bigint not null, `updated_at` bigint not null, constraint `cairn_runs_pk` primary key (`id`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
create table `cairn_steps` (`run_id` varchar(128) not null, `key_hash` char(64) character set ascii collate ascii_bin not null, `step_key` text not null, `name` text not null, `kind` varchar(16) not null, `seq` integer not null, `status` varchar(16) not null, `attempt` integer not null, `max_attempts` integer not null, `queued` smallint not null, `output_json` longtext, `error_json` longtext, `wake_at` bigint, `child_run_id` varchar(128), `created_at` bigint not null, `updated_at` bigint not null, constraint `cairn_steps_pk` primary key (`run_id`, `key_hash`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
create table `cairn_attempts` (`run_id` varchar(128) not null, `key_hash` char(64) character set ascii collate ascii_bin not null, `attempt` integer not null, `step_key` text not null, `step_seq` integer not null, `status` varchar(16) not null, `worker` text, `started_at` bigint not null, `ended_at` bigint, `output_json` longtext, `error_json` longtext, constraint `cairn_attempts_pk` primary key (`run_id`, `key_hash`, `attempt`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
create table `cairn_state` (`run_id` varchar(128) not null, `key_hash` char(64) character set ascii collate ascii_bin not null, `state_key` text not null, `value_json` longtext not null, `updated_at` bigint not null, constraint `cairn_state_pk` primary key (`run_id`, `key_hash`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
create table `cairn_events` (`run_id` varchar(128) not null, `name_hash` char(64) character set ascii collate ascii_bin not null, `name` text not null, `payload_json` longtext not null, `delivered_at` bigint not null, constraint `cairn_events_pk` primary key (`run_id`, `name_hash`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
create table `cairn_versions` (`workflow` varchar(255) not null, `version` varchar(255) not null, `status` varchar(16) not null, `descriptor_json` longtext not null, `created_at` bigint not null, `updated_at` bigint not null, constraint `cairn_versions_pk` primary key (`workflow`, `version`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
create index `cairn_runs_status_created` on `cairn_runs` (`status`, `created_at`, `id`)
-- @query
create index `cairn_runs_workflow_created` on `cairn_runs` (`workflow`, `created_at`, `id`)
-- @query
create index `cairn_runs_created` on `cairn_runs` (`created_at`, `id`)
-- @query
create unique index `cairn_runs_idempotency` on `cairn_runs` (`workflow`, `idempotency_hash`)
-- @query
create index `cairn_runs_due` on `cairn_runs` (`due_at`, `id`)
-- @query
create index `cairn_steps_run_seq` on `cairn_steps` (`run_id`, `seq`)
-- @query
create index `cairn_attempts_history` on `cairn_attempts` (`run_id`, `started_at`, `step_seq`, `attempt`)
-- @migration cairn_0002_step_routines up
-- @query
select version() as v
-- @query
drop procedure if exists `cairn_step_insert`
-- @query
drop procedure if exists `cairn_step_transition`
-- @query
drop procedure if exists `cairn_run_claim`
-- @query
drop procedure if exists `cairn_run_renew`
-- @query
drop procedure if exists `cairn_run_transition`
-- @query
drop procedure if exists `cairn_run_request_cancel`
-- @query
drop procedure if exists `cairn_state_set`
-- @query
create procedure `cairn_step_insert`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_step_key text character set utf8mb4 collate utf8mb4_nopad_bin, in p_name text character set utf8mb4 collate utf8mb4_nopad_bin, in p_kind varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_seq integer, in p_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_max_attempts integer, in p_queued smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_worker text character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint, in p_async smallint)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    begin
      declare v_duplicate integer default 0;
      -- The key exists: nothing is written and the existing step is returned.
      declare continue handler for 1062 set v_duplicate = 1;
      insert into `cairn_steps` (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at) values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now);
      if v_duplicate = 0 then
        set v_done = 1;
        if p_status = 'running' then
          insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
            values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
        end if;
      end if;
    end;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @query
create procedure `cairn_step_transition`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_from_statuses varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin, in p_from_attempt integer, in p_to_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_to_attempt integer, in p_set_output smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_set_error smallint, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake smallint, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint, in p_end_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_output smallint, in p_end_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_error smallint, in p_end_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_start smallint, in p_start_worker text character set utf8mb4 collate utf8mb4_nopad_bin)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    -- A plain read: the run lock is held, so no other writer of this run can change the step now.
    select count(*) into v_done from `cairn_steps`
      where run_id = p_run_id and key_hash = p_key_hash and find_in_set(status, p_from_statuses) > 0 and attempt = p_from_attempt;
    if v_done = 1 then
      update `cairn_steps` set
          status = p_to_status,
          attempt = coalesce(p_to_attempt, attempt),
          output_json = if(p_set_output = 1, p_output, output_json),
          error_json = if(p_set_error = 1, p_error, error_json),
          wake_at = case p_wake when 1 then p_wake_at when 2 then null else wake_at end,
          child_run_id = coalesce(p_child_run_id, child_run_id),
          updated_at = p_now
        where run_id = p_run_id and key_hash = p_key_hash;
      if p_end_status is not null then
        update `cairn_attempts` set status = p_end_status, ended_at = p_now,
            output_json = if(p_end_set_output = 1, p_end_output, output_json),
            error_json = if(p_end_set_error = 1, p_end_error, error_json)
          where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
      end if;
      if p_start = 1 then
        -- After the end above, so closing and reopening one attempt number is ordered.
        insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
          select run_id, key_hash, attempt, step_key, seq, 'running', p_start_worker, p_now from `cairn_steps`
          where run_id = p_run_id and key_hash = p_key_hash
          on duplicate key update status = 'running', worker = p_start_worker, started_at = p_now,
            ended_at = null, output_json = null, error_json = null;
      end if;
    end if;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @query
create procedure `cairn_state_set`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_state_key text character set utf8mb4 collate utf8mb4_nopad_bin, in p_value longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    insert into `cairn_state` (run_id, key_hash, state_key, value_json, updated_at)
      values (p_run_id, p_key_hash, p_state_key, p_value, p_now)
      on duplicate key update value_json = p_value, updated_at = p_now;
    update `cairn_runs` set updated_at = p_now where id = p_run_id;
    set v_done = 1;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done;
  commit;
end
-- @query
create procedure `cairn_run_claim`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_owner text character set utf8mb4 collate utf8mb4_nopad_bin, in p_expires_at bigint, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and status not in ('completed', 'failed', 'cancelled') and (lease_owner is null or lease_expires_at <= p_now or lease_owner = p_owner) for update;
  if v_done = 1 then
    update `cairn_runs` set due_at = p_expires_at, status = 'running', fence = fence + 1, lease_owner = p_owner, lease_expires_at = p_expires_at,
        wake_at = null, updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @query
create procedure `cairn_run_renew`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_expires_at bigint, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and fence = p_fence and status not in ('completed', 'failed', 'cancelled') and lease_owner is not null for update;
  if v_done = 1 then
    update `cairn_runs` set due_at = p_expires_at, lease_expires_at = p_expires_at, updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @query
create procedure `cairn_run_transition`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_from_statuses varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin, in p_to varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake_at bigint, in p_set_output smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_set_error smallint, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and fence = p_fence and find_in_set(status, p_from_statuses) > 0 and status not in ('completed', 'failed', 'cancelled') for update;
  if v_done = 1 then
    update `cairn_runs` set due_at = case p_to when 'waiting' then case when p_wake_at is null then wake_at when wake_at is null or wake_at > p_wake_at then p_wake_at else wake_at end when 'pending' then wake_at when 'running' then lease_expires_at else null end,
        wake_at = case p_to when 'waiting' then case when p_wake_at is null then wake_at when wake_at is null or wake_at > p_wake_at then p_wake_at else wake_at end when 'pending' then wake_at when 'running' then wake_at else null end,
        output_json = if(p_set_output = 1, p_output, output_json),
        error_json = if(p_set_error = 1, p_error, error_json),
        status = p_to,
        lease_owner = if(p_to = 'running', lease_owner, null),
        lease_expires_at = if(p_to = 'running', lease_expires_at, null),
        updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @query
create procedure `cairn_run_request_cancel`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and status not in ('completed', 'failed', 'cancelled') for update;
  if v_done = 1 then
    update `cairn_runs` set due_at = case when status in ('pending', 'waiting') then case when wake_at is null or wake_at > p_now then p_now else wake_at end else due_at end,
        wake_at = case when wake_at is null or wake_at > p_now then p_now else wake_at end, cancel_requested = 1, updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @migration cairn_0003_step_turn up
-- @query ["cairn_steps","turn"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_steps` add column `turn` bigint
-- @query
select version() as v
-- @query
drop procedure if exists `cairn_step_insert`
-- @query
drop procedure if exists `cairn_step_transition`
-- @query
create procedure `cairn_step_insert`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_step_key text character set utf8mb4 collate utf8mb4_nopad_bin, in p_name text character set utf8mb4 collate utf8mb4_nopad_bin, in p_kind varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_seq integer, in p_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_max_attempts integer, in p_queued smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_turn bigint, in p_worker text character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint, in p_async smallint)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    begin
      declare v_duplicate integer default 0;
      -- The key exists: nothing is written and the existing step is returned.
      declare continue handler for 1062 set v_duplicate = 1;
      insert into `cairn_steps` (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at, turn) values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now, p_turn);
      if v_duplicate = 0 then
        set v_done = 1;
        if p_status = 'running' then
          insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
            values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
        end if;
      end if;
    end;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @query
create procedure `cairn_step_transition`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_from_statuses varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin, in p_from_attempt integer, in p_to_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_to_attempt integer, in p_set_output smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_set_error smallint, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake smallint, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_turn bigint, in p_now bigint, in p_end_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_output smallint, in p_end_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_error smallint, in p_end_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_start smallint, in p_start_worker text character set utf8mb4 collate utf8mb4_nopad_bin)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    -- A plain read: the run lock is held, so no other writer of this run can change the step now.
    select count(*) into v_done from `cairn_steps`
      where run_id = p_run_id and key_hash = p_key_hash and find_in_set(status, p_from_statuses) > 0 and attempt = p_from_attempt;
    if v_done = 1 then
      update `cairn_steps` set
          status = p_to_status,
          attempt = coalesce(p_to_attempt, attempt),
          output_json = if(p_set_output = 1, p_output, output_json),
          error_json = if(p_set_error = 1, p_error, error_json),
          wake_at = case p_wake when 1 then p_wake_at when 2 then null else wake_at end,
          child_run_id = coalesce(p_child_run_id, child_run_id),
          turn = coalesce(p_turn, turn),
          updated_at = p_now
        where run_id = p_run_id and key_hash = p_key_hash;
      if p_end_status is not null then
        update `cairn_attempts` set status = p_end_status, ended_at = p_now,
            output_json = if(p_end_set_output = 1, p_end_output, output_json),
            error_json = if(p_end_set_error = 1, p_end_error, error_json)
          where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
      end if;
      if p_start = 1 then
        -- After the end above, so closing and reopening one attempt number is ordered.
        insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
          select run_id, key_hash, attempt, step_key, seq, 'running', p_start_worker, p_now from `cairn_steps`
          where run_id = p_run_id and key_hash = p_key_hash
          on duplicate key update status = 'running', worker = p_start_worker, started_at = p_now,
            ended_at = null, output_json = null, error_json = null;
      end if;
    end if;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @migration cairn_0004_run_deadline up
-- @query ["cairn_runs","deadline"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `deadline` bigint
-- @query ["cairn_runs","cancel_reason"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `cancel_reason` text
-- @query
drop procedure if exists `cairn_run_request_cancel`
-- @query
select version() as v
-- @query
create procedure `cairn_run_request_cancel`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_reason text character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and status not in ('completed', 'failed', 'cancelled') for update;
  if v_done = 1 then
    update `cairn_runs` set due_at = case when status in ('pending', 'waiting') then case when wake_at is null or wake_at > p_now then p_now else wake_at end else due_at end,
        wake_at = case when wake_at is null or wake_at > p_now then p_now else wake_at end, cancel_reason = case when cancel_requested = 0 then p_reason else cancel_reason end, cancel_requested = 1, updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @migration cairn_0005_event_messages up
-- @query
drop table if exists `cairn_events_v5`
-- @query
select version() as v
-- @query
create table `cairn_events_v5` (`run_id` varchar(128) not null, `name_hash` char(64) character set ascii collate ascii_bin not null, `seq` integer not null, `name` text not null, `payload_json` longtext not null, `delivered_at` bigint not null, `idempotency_hash` char(64) character set ascii collate ascii_bin, `idempotency_key` text, constraint `cairn_events_v5_pk` primary key (`run_id`, `name_hash`, `seq`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
insert into `cairn_events_v5` (run_id, name_hash, seq, name, payload_json, delivered_at)
    select run_id, name_hash, 1, name, payload_json, delivered_at from `cairn_events`
-- @query
drop table `cairn_events`
-- @query
alter table `cairn_events_v5` rename to `cairn_events`
-- @query
create unique index `cairn_events_idempotency` on `cairn_events` (`run_id`, `idempotency_hash`)
-- @migration cairn_0006_operations up
-- @query ["cairn_runs","forked_from_run_id"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `forked_from_run_id` varchar(128)
-- @query ["cairn_runs","forked_from_step_key"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `forked_from_step_key` text
-- @query ["cairn_runs","retries_json"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `retries_json` longtext
-- @query ["cairn_runs","cairn_runs_parent_created"]
select count(*) as n from information_schema.statistics
    where table_schema = database() and table_name = ? and index_name = ?
-- @query
create index `cairn_runs_parent_created` on `cairn_runs` (`parent_run_id`, `created_at`, `id`)
-- @query ["cairn_runs","cairn_runs_status_updated"]
select count(*) as n from information_schema.statistics
    where table_schema = database() and table_name = ? and index_name = ?
-- @query
create index `cairn_runs_status_updated` on `cairn_runs` (`status`, `updated_at`, `id`)
-- @migration cairn_0007_run_trace_context up
-- @query ["cairn_runs","trace_context_json"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `trace_context_json` longtext
-- @migration cairn_0008_step_finished up
-- @query ["cairn_steps","fence"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_steps` add column `fence` bigint
-- @query
select version() as v
-- @query
drop procedure if exists `cairn_step_insert`
-- @query
drop procedure if exists `cairn_step_transition`
-- @query
create procedure `cairn_step_insert`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_step_key text character set utf8mb4 collate utf8mb4_nopad_bin, in p_name text character set utf8mb4 collate utf8mb4_nopad_bin, in p_kind varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_seq integer, in p_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_max_attempts integer, in p_queued smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_turn bigint, in p_worker text character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint, in p_attempt_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_attempt_started_at bigint, in p_attempt_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_attempt_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_async smallint)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    begin
      declare v_duplicate integer default 0;
      -- The key exists: nothing is written and the existing step is returned.
      declare continue handler for 1062 set v_duplicate = 1;
      insert into `cairn_steps` (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at, turn, fence) values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now, p_turn, p_fence);
      if v_duplicate = 0 then
        set v_done = 1;
        if p_status = 'running' then
          insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
            values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
        elseif p_attempt_status is not null then
          insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
      values (p_run_id, p_key_hash, 1, p_step_key, p_seq, p_attempt_status, p_worker, p_attempt_started_at, p_now, p_attempt_output, p_attempt_error);
        end if;
      end if;
    end;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @query
create procedure `cairn_step_transition`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_from_statuses varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin, in p_from_attempt integer, in p_to_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_to_attempt integer, in p_set_output smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_set_error smallint, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake smallint, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_turn bigint, in p_now bigint, in p_end_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_output smallint, in p_end_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_error smallint, in p_end_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_start smallint, in p_start_worker text character set utf8mb4 collate utf8mb4_nopad_bin)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    -- A plain read: the run lock is held, so no other writer of this run can change the step now.
    select count(*) into v_done from `cairn_steps`
      where run_id = p_run_id and key_hash = p_key_hash and find_in_set(status, p_from_statuses) > 0 and attempt = p_from_attempt;
    if v_done = 1 then
      update `cairn_steps` set
          status = p_to_status,
          attempt = coalesce(p_to_attempt, attempt),
          output_json = if(p_set_output = 1, p_output, output_json),
          error_json = if(p_set_error = 1, p_error, error_json),
          wake_at = case p_wake when 1 then p_wake_at when 2 then null else wake_at end,
          child_run_id = coalesce(p_child_run_id, child_run_id),
          turn = coalesce(p_turn, turn),
          updated_at = p_now
        where run_id = p_run_id and key_hash = p_key_hash;
      if p_end_status is not null then
        update `cairn_attempts` set status = p_end_status, ended_at = p_now,
            output_json = if(p_end_set_output = 1, p_end_output, output_json),
            error_json = if(p_end_set_error = 1, p_end_error, error_json)
          where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
      end if;
      if p_start = 1 then
        -- After the end above, so closing and reopening one attempt number is ordered.
        insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
          select run_id, key_hash, attempt, step_key, seq, 'running', p_start_worker, p_now from `cairn_steps`
          where run_id = p_run_id and key_hash = p_key_hash
          on duplicate key update status = 'running', worker = p_start_worker, started_at = p_now,
            ended_at = null, output_json = null, error_json = null;
      end if;
    end if;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @migration cairn_0010_schedules up
-- @query
drop table if exists `cairn_schedules`
-- @query
select version() as v
-- @query
create table `cairn_schedules` (`name` varchar(255) not null, `revision` bigint not null, `due_at` bigint, `record_json` longtext not null, constraint `cairn_schedules_pk` primary key (`name`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
create index `cairn_schedules_due` on `cairn_schedules` (`due_at`, `name`)
-- @migration cairn_0011_slots up
-- @query
select version() as v
-- @query
drop table if exists `cairn_slot_waiters`
-- @query
drop table if exists `cairn_slots`
-- @query
create table `cairn_slots` (`key_hash` char(64) character set ascii collate ascii_bin not null, `idx` integer not null, `holder` text, `expires_at` bigint not null, constraint `cairn_slots_pk` primary key (`key_hash`, `idx`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
create table `cairn_slot_waiters` (`key_hash` char(64) character set ascii collate ascii_bin not null, `holder_hash` char(64) character set ascii collate ascii_bin not null, `holder` text not null, `priority` integer not null, `queued_at` bigint not null, `expires_at` bigint not null, constraint `cairn_slot_waiters_pk` primary key (`key_hash`, `holder_hash`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
create index `cairn_slot_waiters_line` on `cairn_slot_waiters` (`key_hash`, `priority` desc, `queued_at`)
-- @query ["cairn_runs","priority"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `priority` integer
-- @query
select version() as v
-- @query
drop procedure if exists `cairn_slot_acquire`
-- @query
drop procedure if exists `cairn_slot_release`
-- @query
create procedure `cairn_slot_acquire`(in p_key_hash char(64) character set ascii collate ascii_bin, in p_holder text character set utf8mb4 collate utf8mb4_nopad_bin, in p_holder_hash char(64) character set ascii collate ascii_bin, in p_limit integer, in p_expires_at bigint, in p_now bigint, in p_wait smallint, in p_priority integer, in p_queued_at bigint, in p_wait_expires_at bigint)
modifies sql data
sql security invoker
begin
  declare v_lock integer default 0;
  declare v_rows integer default 0;
  declare v_held integer default 0;
  declare v_free_at bigint default null;
  declare v_free_idx integer default null;
  declare v_mine integer default null;
  declare v_waiting integer default 0;
  declare v_ahead integer default 0;
  declare v_idx integer default 0;
  declare v_acquired integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_lock from `cairn_slots` where key_hash = p_key_hash and idx = 0 for update;
  if v_lock = 0 then
    -- The key's first acquire makes its rows; a concurrent first acquire's rows are ignored.
    while v_idx < p_limit do
      insert ignore into `cairn_slots` (key_hash, idx, holder, expires_at) values (p_key_hash, v_idx, null, 0);
      set v_idx = v_idx + 1;
    end while;
    select count(*) into v_lock from `cairn_slots` where key_hash = p_key_hash and idx = 0 for update;
  end if;
  select count(*), coalesce(sum(holder is not null and expires_at > p_now), 0),
      min(case when holder is not null and expires_at > p_now then expires_at end),
      min(case when idx < p_limit and (holder is null or expires_at <= p_now) then idx end),
      max(case when holder = p_holder then idx end)
    into v_rows, v_held, v_free_at, v_free_idx, v_mine
    from `cairn_slots` where key_hash = p_key_hash for update;
  if v_mine is null and v_free_idx is null and v_rows < p_limit then
    -- The limit grew since the rows were made: the new rows are free, the lowest is v_rows.
    set v_idx = v_rows;
    while v_idx < p_limit do
      insert ignore into `cairn_slots` (key_hash, idx, holder, expires_at) values (p_key_hash, v_idx, null, 0);
      set v_idx = v_idx + 1;
    end while;
    set v_free_idx = v_rows;
  end if;
  select count(*) into v_waiting from `cairn_slot_waiters` where key_hash = p_key_hash and holder_hash = p_holder_hash;
  if p_wait = 1 then
    select count(*) into v_ahead from `cairn_slot_waiters`
      where key_hash = p_key_hash and holder_hash <> p_holder_hash and expires_at > p_now
        and (priority > p_priority or (priority = p_priority and (queued_at < p_queued_at or (queued_at = p_queued_at and holder < p_holder))));
  end if;
  if v_mine is not null then
    update `cairn_slots` set expires_at = greatest(expires_at, p_expires_at) where key_hash = p_key_hash and idx = v_mine;
    set v_acquired = 1;
  elseif v_free_idx is not null and p_limit - v_held > v_ahead then
    update `cairn_slots` set holder = p_holder, expires_at = p_expires_at where key_hash = p_key_hash and idx = v_free_idx;
    set v_acquired = 1;
  elseif p_wait = 1 then
    insert into `cairn_slot_waiters` (key_hash, holder_hash, holder, priority, queued_at, expires_at)
      values (p_key_hash, p_holder_hash, p_holder, p_priority, p_queued_at, p_wait_expires_at)
      on duplicate key update priority = p_priority, queued_at = p_queued_at, expires_at = p_wait_expires_at;
  end if;
  if v_acquired = 1 and v_waiting > 0 then
    delete from `cairn_slot_waiters` where key_hash = p_key_hash and (holder_hash = p_holder_hash or expires_at <= p_now);
  end if;
  commit;
  select v_acquired as acquired, case when v_acquired = 0 and p_limit - v_held <= 0 then v_free_at end as free_at;
end
-- @query
create procedure `cairn_slot_release`(in p_key_hash char(64) character set ascii collate ascii_bin, in p_holder text character set utf8mb4 collate utf8mb4_nopad_bin, in p_holder_hash char(64) character set ascii collate ascii_bin, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_lock integer default 0;
  declare v_next text character set utf8mb4 collate utf8mb4_nopad_bin default null;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_lock from `cairn_slots` where key_hash = p_key_hash and idx = 0 for update;
  update `cairn_slots` set holder = null, expires_at = 0 where key_hash = p_key_hash and holder = p_holder;
  delete from `cairn_slot_waiters` where key_hash = p_key_hash and (holder_hash = p_holder_hash or expires_at <= p_now);
  select holder into v_next from `cairn_slot_waiters` where key_hash = p_key_hash and expires_at > p_now
    order by priority desc, queued_at, holder limit 1;
  commit;
  select v_next as next_holder;
end
-- @migration cairn_0011_slots down
-- @query
drop procedure if exists `cairn_slot_acquire`
-- @query
drop procedure if exists `cairn_slot_release`
-- @query
drop table if exists `cairn_slot_waiters`
-- @query
drop table if exists `cairn_slots`
-- @query
alter table `cairn_runs` drop column `priority`
-- @migration cairn_0010_schedules down
-- @query
drop table if exists `cairn_schedules`
-- @migration cairn_0008_step_finished down
-- @query
select version() as v
-- @query
drop procedure if exists `cairn_step_insert`
-- @query
drop procedure if exists `cairn_step_transition`
-- @query
create procedure `cairn_step_insert`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_step_key text character set utf8mb4 collate utf8mb4_nopad_bin, in p_name text character set utf8mb4 collate utf8mb4_nopad_bin, in p_kind varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_seq integer, in p_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_max_attempts integer, in p_queued smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_turn bigint, in p_worker text character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint, in p_async smallint)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    begin
      declare v_duplicate integer default 0;
      -- The key exists: nothing is written and the existing step is returned.
      declare continue handler for 1062 set v_duplicate = 1;
      insert into `cairn_steps` (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at, turn) values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now, p_turn);
      if v_duplicate = 0 then
        set v_done = 1;
        if p_status = 'running' then
          insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
            values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
        end if;
      end if;
    end;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @query
create procedure `cairn_step_transition`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_from_statuses varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin, in p_from_attempt integer, in p_to_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_to_attempt integer, in p_set_output smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_set_error smallint, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake smallint, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_turn bigint, in p_now bigint, in p_end_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_output smallint, in p_end_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_error smallint, in p_end_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_start smallint, in p_start_worker text character set utf8mb4 collate utf8mb4_nopad_bin)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    -- A plain read: the run lock is held, so no other writer of this run can change the step now.
    select count(*) into v_done from `cairn_steps`
      where run_id = p_run_id and key_hash = p_key_hash and find_in_set(status, p_from_statuses) > 0 and attempt = p_from_attempt;
    if v_done = 1 then
      update `cairn_steps` set
          status = p_to_status,
          attempt = coalesce(p_to_attempt, attempt),
          output_json = if(p_set_output = 1, p_output, output_json),
          error_json = if(p_set_error = 1, p_error, error_json),
          wake_at = case p_wake when 1 then p_wake_at when 2 then null else wake_at end,
          child_run_id = coalesce(p_child_run_id, child_run_id),
          turn = coalesce(p_turn, turn),
          updated_at = p_now
        where run_id = p_run_id and key_hash = p_key_hash;
      if p_end_status is not null then
        update `cairn_attempts` set status = p_end_status, ended_at = p_now,
            output_json = if(p_end_set_output = 1, p_end_output, output_json),
            error_json = if(p_end_set_error = 1, p_end_error, error_json)
          where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
      end if;
      if p_start = 1 then
        -- After the end above, so closing and reopening one attempt number is ordered.
        insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
          select run_id, key_hash, attempt, step_key, seq, 'running', p_start_worker, p_now from `cairn_steps`
          where run_id = p_run_id and key_hash = p_key_hash
          on duplicate key update status = 'running', worker = p_start_worker, started_at = p_now,
            ended_at = null, output_json = null, error_json = null;
      end if;
    end if;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @query ["cairn_steps","fence"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_steps` drop column `fence`
-- @migration cairn_0007_run_trace_context down
-- @query ["cairn_runs","trace_context_json"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `trace_context_json`
-- @migration cairn_0006_operations down
-- @query ["cairn_runs","cairn_runs_parent_created"]
select count(*) as n from information_schema.statistics
    where table_schema = database() and table_name = ? and index_name = ?
-- @query
drop index `cairn_runs_parent_created` on `cairn_runs`
-- @query ["cairn_runs","cairn_runs_status_updated"]
select count(*) as n from information_schema.statistics
    where table_schema = database() and table_name = ? and index_name = ?
-- @query
drop index `cairn_runs_status_updated` on `cairn_runs`
-- @query ["cairn_runs","retries_json"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `retries_json`
-- @query ["cairn_runs","forked_from_step_key"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `forked_from_step_key`
-- @query ["cairn_runs","forked_from_run_id"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `forked_from_run_id`
-- @migration cairn_0005_event_messages down
-- @query
drop table if exists `cairn_events_v1`
-- @query
select version() as v
-- @query
create table `cairn_events_v1` (`run_id` varchar(128) not null, `name_hash` char(64) character set ascii collate ascii_bin not null, `name` text not null, `payload_json` longtext not null, `delivered_at` bigint not null, constraint `cairn_events_v1_pk` primary key (`run_id`, `name_hash`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
insert into `cairn_events_v1` (run_id, name_hash, name, payload_json, delivered_at)
    select run_id, name_hash, name, payload_json, delivered_at from `cairn_events` where seq = 1
-- @query
drop table `cairn_events`
-- @query
alter table `cairn_events_v1` rename to `cairn_events`
-- @migration cairn_0004_run_deadline down
-- @query
drop procedure if exists `cairn_run_request_cancel`
-- @query
select version() as v
-- @query
create procedure `cairn_run_request_cancel`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and status not in ('completed', 'failed', 'cancelled') for update;
  if v_done = 1 then
    update `cairn_runs` set due_at = case when status in ('pending', 'waiting') then case when wake_at is null or wake_at > p_now then p_now else wake_at end else due_at end,
        wake_at = case when wake_at is null or wake_at > p_now then p_now else wake_at end, cancel_requested = 1, updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @query ["cairn_runs","cancel_reason"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `cancel_reason`
-- @query ["cairn_runs","deadline"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `deadline`
-- @migration cairn_0003_step_turn down
-- @query
select version() as v
-- @query
drop procedure if exists `cairn_step_insert`
-- @query
drop procedure if exists `cairn_step_transition`
-- @query
create procedure `cairn_step_insert`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_step_key text character set utf8mb4 collate utf8mb4_nopad_bin, in p_name text character set utf8mb4 collate utf8mb4_nopad_bin, in p_kind varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_seq integer, in p_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_max_attempts integer, in p_queued smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_worker text character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint, in p_async smallint)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    begin
      declare v_duplicate integer default 0;
      -- The key exists: nothing is written and the existing step is returned.
      declare continue handler for 1062 set v_duplicate = 1;
      insert into `cairn_steps` (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, error_json, wake_at, child_run_id, created_at, updated_at) values (p_run_id, p_key_hash, p_step_key, p_name, p_kind, p_seq, p_status, 1, p_max_attempts, p_queued, p_output, p_error, p_wake_at, p_child_run_id, p_now, p_now);
      if v_duplicate = 0 then
        set v_done = 1;
        if p_status = 'running' then
          insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
            values (p_run_id, p_key_hash, 1, p_step_key, p_seq, 'running', p_worker, p_now);
        end if;
      end if;
    end;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @query
create procedure `cairn_step_transition`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_fence bigint, in p_key_hash char(64) character set ascii collate ascii_bin, in p_from_statuses varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin, in p_from_attempt integer, in p_to_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_to_attempt integer, in p_set_output smallint, in p_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_set_error smallint, in p_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_wake smallint, in p_wake_at bigint, in p_child_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_now bigint, in p_end_status varchar(16) character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_output smallint, in p_end_output longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_end_set_error smallint, in p_end_error longtext character set utf8mb4 collate utf8mb4_nopad_bin, in p_start smallint, in p_start_worker text character set utf8mb4 collate utf8mb4_nopad_bin)
modifies sql data
sql security invoker
begin
  declare v_fence bigint default null;
  declare v_status varchar(16) default null;
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select fence, status into v_fence, v_status from `cairn_runs` where id = p_run_id for update;
  if v_fence is not null and (p_fence is null or v_fence = p_fence) and v_status not in ('completed', 'failed', 'cancelled') then
    -- A plain read: the run lock is held, so no other writer of this run can change the step now.
    select count(*) into v_done from `cairn_steps`
      where run_id = p_run_id and key_hash = p_key_hash and find_in_set(status, p_from_statuses) > 0 and attempt = p_from_attempt;
    if v_done = 1 then
      update `cairn_steps` set
          status = p_to_status,
          attempt = coalesce(p_to_attempt, attempt),
          output_json = if(p_set_output = 1, p_output, output_json),
          error_json = if(p_set_error = 1, p_error, error_json),
          wake_at = case p_wake when 1 then p_wake_at when 2 then null else wake_at end,
          child_run_id = coalesce(p_child_run_id, child_run_id),
          updated_at = p_now
        where run_id = p_run_id and key_hash = p_key_hash;
      if p_end_status is not null then
        update `cairn_attempts` set status = p_end_status, ended_at = p_now,
            output_json = if(p_end_set_output = 1, p_end_output, output_json),
            error_json = if(p_end_set_error = 1, p_end_error, error_json)
          where run_id = p_run_id and key_hash = p_key_hash and attempt = p_from_attempt;
      end if;
      if p_start = 1 then
        -- After the end above, so closing and reopening one attempt number is ordered.
        insert into `cairn_attempts` (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
          select run_id, key_hash, attempt, step_key, seq, 'running', p_start_worker, p_now from `cairn_steps`
          where run_id = p_run_id and key_hash = p_key_hash
          on duplicate key update status = 'running', worker = p_start_worker, started_at = p_now,
            ended_at = null, output_json = null, error_json = null;
      end if;
    end if;
  end if;
  select v_fence as r_fence, v_status as r_status, v_done as done, s.*
    from (select 1 as one) x left join `cairn_steps` s on s.run_id = p_run_id and s.key_hash = p_key_hash;
  commit;
end
-- @query ["cairn_steps","turn"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_steps` drop column `turn`
-- @migration cairn_0002_step_routines down
-- @query
drop procedure if exists `cairn_step_insert`
-- @query
drop procedure if exists `cairn_step_transition`
-- @query
drop procedure if exists `cairn_run_claim`
-- @query
drop procedure if exists `cairn_run_renew`
-- @query
drop procedure if exists `cairn_run_transition`
-- @query
drop procedure if exists `cairn_run_request_cancel`
-- @query
drop procedure if exists `cairn_state_set`
-- @migration cairn_0001_initial down
-- @query
drop table if exists `cairn_attempts`
-- @query
drop table if exists `cairn_steps`
-- @query
drop table if exists `cairn_state`
-- @query
drop table if exists `cairn_events`
-- @query
drop table if exists `cairn_versions`
-- @query
drop table if exists `cairn_runs`
-- @migration cairn_0012_step_insert_v2 up
-- @migration cairn_0012_step_insert_v2 down
-- @migration cairn_0013_streams up
-- @query
drop table if exists `cairn_stream_entries`
-- @query
select version() as v
-- @query
create table `cairn_stream_entries` (`run_id` varchar(128) not null, `stream_hash` char(64) character set ascii collate ascii_bin not null, `idx` bigint not null, `stream` text not null, `data_json` longtext, `closed` smallint not null, `written_at` bigint not null, constraint `cairn_stream_entries_pk` primary key (`run_id`, `stream_hash`, `idx`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @migration cairn_0013_streams down
-- @query
drop table if exists `cairn_stream_entries`
-- @migration cairn_0014_runs_workflow_status up
-- @query ["cairn_runs","cairn_runs_workflow_status_created"]
select count(*) as n from information_schema.statistics
    where table_schema = database() and table_name = ? and index_name = ?
-- @query
create index `cairn_runs_workflow_status_created` on `cairn_runs` (`workflow`, `status`, `created_at`, `id`)
-- @migration cairn_0014_runs_workflow_status down
-- @query ["cairn_runs","cairn_runs_workflow_status_created"]
select count(*) as n from information_schema.statistics
    where table_schema = database() and table_name = ? and index_name = ?
-- @query
drop index `cairn_runs_workflow_status_created` on `cairn_runs`
-- @migration cairn_0015_run_pause up
-- @query ["cairn_runs","paused_json"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `paused_json` longtext
-- @query
drop table if exists `cairn_pauses`
-- @query
select version() as v
-- @query
create table `cairn_pauses` (`workflow` varchar(255) not null, `record_json` longtext not null, constraint `cairn_pauses_pk` primary key (`workflow`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query
drop procedure if exists `cairn_run_claim`
-- @query
select version() as v
-- @query
create procedure `cairn_run_claim`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_owner text character set utf8mb4 collate utf8mb4_nopad_bin, in p_expires_at bigint, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and status not in ('completed', 'failed', 'cancelled') and paused_json is null and (lease_owner is null or lease_expires_at <= p_now or lease_owner = p_owner) for update;
  if v_done = 1 then
    update `cairn_runs` set due_at = p_expires_at, status = 'running', fence = fence + 1, lease_owner = p_owner, lease_expires_at = p_expires_at,
        wake_at = null, updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @migration cairn_0015_run_pause down
-- @query
drop procedure if exists `cairn_run_claim`
-- @query
select version() as v
-- @query
create procedure `cairn_run_claim`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_owner text character set utf8mb4 collate utf8mb4_nopad_bin, in p_expires_at bigint, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and status not in ('completed', 'failed', 'cancelled') and (lease_owner is null or lease_expires_at <= p_now or lease_owner = p_owner) for update;
  if v_done = 1 then
    update `cairn_runs` set due_at = p_expires_at, status = 'running', fence = fence + 1, lease_owner = p_owner, lease_expires_at = p_expires_at,
        wake_at = null, updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @query
drop table if exists `cairn_pauses`
-- @query ["cairn_runs","paused_json"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `paused_json`
-- @migration cairn_0016_bulk_operations up
-- @query
drop table if exists `cairn_bulk_operations`
-- @query
select version() as v
-- @query
create table `cairn_bulk_operations` (`id` varchar(128) not null, `revision` bigint not null, `record_json` longtext not null, constraint `cairn_bulk_operations_pk` primary key (`id`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @migration cairn_0016_bulk_operations down
-- @query
drop table if exists `cairn_bulk_operations`
-- @migration cairn_0017_run_tags up
-- @query ["cairn_runs","tags_json"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `tags_json` longtext
-- @query ["cairn_runs","tag_writes"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `tag_writes` integer
-- @query
drop table if exists `cairn_run_tags`
-- @query
select version() as v
-- @query
create table `cairn_run_tags` (`run_id` varchar(128) not null, `tag_hash` char(64) character set ascii collate ascii_bin not null, `tag_key` text not null, `tag_value` text not null, `run_created_at` bigint not null, constraint `cairn_run_tags_pk` primary key (`run_id`, `tag_hash`)) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_nopad_bin
-- @query ["cairn_run_tags","cairn_run_tags_find"]
select count(*) as n from information_schema.statistics
    where table_schema = database() and table_name = ? and index_name = ?
-- @query
create index `cairn_run_tags_find` on `cairn_run_tags` (`tag_hash`, `run_created_at`, `run_id`)
-- @migration cairn_0017_run_tags down
-- @query
drop table if exists `cairn_run_tags`
-- @query ["cairn_runs","tag_writes"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `tag_writes`
-- @query ["cairn_runs","tags_json"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `tags_json`
-- @migration cairn_0018_run_wake_promise up
-- @query ["cairn_runs","promised_at"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `promised_at` bigint
-- @query ["cairn_runs","promises"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` add column `promises` integer
-- @query
drop procedure if exists `cairn_run_claim`
-- @query
select version() as v
-- @query
create procedure `cairn_run_claim`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_owner text character set utf8mb4 collate utf8mb4_nopad_bin, in p_expires_at bigint, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and status not in ('completed', 'failed', 'cancelled') and paused_json is null and (lease_owner is null or lease_expires_at <= p_now or lease_owner = p_owner) for update;
  if v_done = 1 then
    update `cairn_runs` set wake_at = case when promised_at > p_now and (status = 'pending' or wake_at is null or wake_at <= p_now or wake_at > promised_at)
        then promised_at else case when status <> 'pending' and wake_at > p_now then wake_at else null end end, promises = case when promised_at > p_now then promises else null end,
        promised_at = case when promised_at > p_now then promised_at else null end, due_at = p_expires_at, status = 'running', fence = fence + 1,
        lease_owner = p_owner, lease_expires_at = p_expires_at, updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @migration cairn_0018_run_wake_promise down
-- @query
drop procedure if exists `cairn_run_claim`
-- @query
select version() as v
-- @query
create procedure `cairn_run_claim`(in p_run_id varchar(128) character set utf8mb4 collate utf8mb4_nopad_bin, in p_owner text character set utf8mb4 collate utf8mb4_nopad_bin, in p_expires_at bigint, in p_now bigint)
modifies sql data
sql security invoker
begin
  declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;
  select count(*) into v_done from `cairn_runs` where id = p_run_id and status not in ('completed', 'failed', 'cancelled') and paused_json is null and (lease_owner is null or lease_expires_at <= p_now or lease_owner = p_owner) for update;
  if v_done = 1 then
    update `cairn_runs` set due_at = p_expires_at, status = 'running', fence = fence + 1, lease_owner = p_owner, lease_expires_at = p_expires_at,
        wake_at = null, updated_at = p_now where id = p_run_id;
  end if;
  select v_done as done, r.* from `cairn_runs` r where r.id = p_run_id;
  commit;
end
-- @query ["cairn_runs","promises"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `promises`
-- @query ["cairn_runs","promised_at"]
select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ? and column_name = ?
-- @query
alter table `cairn_runs` drop column `promised_at`
