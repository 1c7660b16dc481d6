import type { TableNames } from '../schema/tables.js';
import { procedureHead } from './procedure-parts.js';
import { SLOT_ACQUIRE_PARAMS, SLOT_RELEASE_PARAMS, slotRoutineNames } from '../routines/slot-routine-params.js';

/**
 * The stored procedures behind `slots.acquire` and `slots.release` on MySQL/MariaDB
 * (`cairn_0011_slots`): one round trip each, one transaction inside. Both first lock row 0 of the
 * key, so calls on one key take turns; the acquire then reads the key's rows with a locking read
 * (`FOR UPDATE`: the latest committed rows, which a renew cannot change until the commit), and its
 * waiter reads come after the lock, so the transaction's snapshot includes every waiter recorded
 * before. Each returns one result set: `acquired`, `free_at` / `next_holder`.
 */
export function mysqlSlotRoutines(names: TableNames, collation: string): string[] {
  const r = slotRoutineNames(names.prefix);
  const slots = `\`${names.slots}\``;
  const waiters = `\`${names.slot_waiters}\``;
  const lock = `select count(*) into v_lock from ${slots} where key_hash = p_key_hash and idx = 0 for update;`;
  const dequeue = `delete from ${waiters} where key_hash = p_key_hash and (holder_hash = p_holder_hash or expires_at <= p_now);`;
  // Any SQL error rolls the transaction back and reaches the caller (a deadlock victim is retried whole).
  const onError = `declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;`;
  const acquire = `${procedureHead(r.acquire, SLOT_ACQUIRE_PARAMS, collation)}
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
  ${onError}
  start transaction;
  ${lock}
  if v_lock = 0 then
    -- The key's first acquire makes its rows; a concurrent first acquire's rows are ignored.
    while v_idx < p_limit do
      insert ignore into ${slots} (key_hash, idx, holder, expires_at) values (p_key_hash, v_idx, null, 0);
      set v_idx = v_idx + 1;
    end while;
    ${lock}
  end if;
  select count(*), coalesce(sum(holder is not null and expires_at > p_now), 0),
      min(case when holder is not null and expires_at > p_now then expires_at end),
      min(case when idx < p_limit and (holder is null or expires_at <= p_now) then idx end),
      max(case when holder = p_holder then idx end)
    into v_rows, v_held, v_free_at, v_free_idx, v_mine
    from ${slots} where key_hash = p_key_hash for update;
  if v_mine is null and v_free_idx is null and v_rows < p_limit then
    -- The limit grew since the rows were made: the new rows are free, the lowest is v_rows.
    set v_idx = v_rows;
    while v_idx < p_limit do
      insert ignore into ${slots} (key_hash, idx, holder, expires_at) values (p_key_hash, v_idx, null, 0);
      set v_idx = v_idx + 1;
    end while;
    set v_free_idx = v_rows;
  end if;
  select count(*) into v_waiting from ${waiters} where key_hash = p_key_hash and holder_hash = p_holder_hash;
  if p_wait = 1 then
    select count(*) into v_ahead from ${waiters}
      where key_hash = p_key_hash and holder_hash <> p_holder_hash and expires_at > p_now
        and (priority > p_priority or (priority = p_priority and (queued_at < p_queued_at or (queued_at = p_queued_at and holder < p_holder))));
  end if;
  if v_mine is not null then
    update ${slots} set expires_at = greatest(expires_at, p_expires_at) where key_hash = p_key_hash and idx = v_mine;
    set v_acquired = 1;
  elseif v_free_idx is not null and p_limit - v_held > v_ahead then
    update ${slots} set holder = p_holder, expires_at = p_expires_at where key_hash = p_key_hash and idx = v_free_idx;
    set v_acquired = 1;
  elseif p_wait = 1 then
    insert into ${waiters} (key_hash, holder_hash, holder, priority, queued_at, expires_at)
      values (p_key_hash, p_holder_hash, p_holder, p_priority, p_queued_at, p_wait_expires_at)
      on duplicate key update priority = p_priority, queued_at = p_queued_at, expires_at = p_wait_expires_at;
  end if;
  if v_acquired = 1 and v_waiting > 0 then
    ${dequeue}
  end if;
  commit;
  select v_acquired as acquired, case when v_acquired = 0 and p_limit - v_held <= 0 then v_free_at end as free_at;
end`;
  const release = `${procedureHead(r.release, SLOT_RELEASE_PARAMS, collation)}
  declare v_lock integer default 0;
  declare v_next text character set utf8mb4 collate ${collation} default null;
  ${onError}
  start transaction;
  ${lock}
  update ${slots} set holder = null, expires_at = 0 where key_hash = p_key_hash and holder = p_holder;
  ${dequeue}
  select holder into v_next from ${waiters} where key_hash = p_key_hash and expires_at > p_now
    order by priority desc, queued_at, holder limit 1;
  commit;
  select v_next as next_holder;
end`;
  return [acquire, release];
}

/** Drops the two slot procedures (MySQL has no `create or replace procedure`; also the down of `cairn_0011_slots`). */
export function dropMysqlSlotRoutines(names: TableNames): string[] {
  const r = slotRoutineNames(names.prefix);
  return [r.acquire, r.release].map((name) => `drop procedure if exists \`${name}\``);
}
