import type { TableNames } from '../schema/tables.js';
import { postgresParamTypes, postgresSignature } from './param-types.js';
import { SLOT_ACQUIRE_PARAMS, SLOT_RELEASE_PARAMS, slotRoutineNames } from '../routines/slot-routine-params.js';

/**
 * The PL/pgSQL functions behind `slots.acquire` and `slots.release` (`cairn_0011_slots`): one round
 * trip each. Both first lock row 0 of the key, so calls on one key take turns and each statement
 * after the lock (a fresh READ COMMITTED snapshot) sees what the one before committed: the rule
 * "free slots outnumber the waiters ahead" and the line are exact, and a release sees every waiter
 * recorded before it. A grant updates one free row and re-checks that it is free: a renew of the
 * row's expired holder (which takes no key lock) may have come first, and the acquire reads again.
 */
export function postgresSlotRoutines(names: TableNames): string[] {
  const r = slotRoutineNames(names.prefix);
  const slots = `"${names.slots}"`;
  const waiters = `"${names.slot_waiters}"`;
  const lock = `perform 1 from ${slots} s where s.key_hash = p_key_hash and s.idx = 0 for update;`;
  const dequeue = `delete from ${waiters} w where w.key_hash = p_key_hash and (w.holder_hash = p_holder_hash or w.expires_at <= p_now);`;
  const acquire = `create or replace function "${r.acquire}"(${postgresSignature(SLOT_ACQUIRE_PARAMS)})
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
  ${lock}
  if not found then
    -- The key's first acquire makes its rows; a concurrent first acquire's rows are ignored.
    insert into ${slots} (key_hash, idx, holder, expires_at)
      select p_key_hash, g, null, 0 from generate_series(0, p_limit - 1) g on conflict do nothing;
    ${lock}
  end if;
  select count(*) into v_waiting from ${waiters} w where w.key_hash = p_key_hash and w.holder_hash = p_holder_hash;
  if p_wait = 1 then
    select count(*) into v_ahead from ${waiters} w
      where w.key_hash = p_key_hash and w.holder_hash <> p_holder_hash and w.expires_at > p_now
        and (w.priority > p_priority or (w.priority = p_priority and (w.queued_at < p_queued_at or (w.queued_at = p_queued_at and w.holder < p_holder))));
  end if;
  for v_try in 1..8 loop
    select count(*), coalesce(sum(case when s.holder is not null and s.expires_at > p_now then 1 else 0 end), 0),
        min(case when s.holder is not null and s.expires_at > p_now then s.expires_at end),
        min(case when s.idx < p_limit and (s.holder is null or s.expires_at <= p_now) then s.idx end),
        max(case when s.holder = p_holder then s.idx end)
      into v_rows, v_held, v_free_at, v_free_idx, v_mine
      from ${slots} s where s.key_hash = p_key_hash;
    if v_mine is not null then
      update ${slots} s set expires_at = greatest(s.expires_at, p_expires_at) where s.key_hash = p_key_hash and s.idx = v_mine;
      if v_waiting > 0 then ${dequeue} end if;
      return query select true, null::bigint;
      return;
    end if;
    if v_free_idx is null and v_rows < p_limit then
      -- The limit grew since the rows were made.
      insert into ${slots} (key_hash, idx, holder, expires_at)
        select p_key_hash, g, null, 0 from generate_series(v_rows, p_limit - 1) g on conflict do nothing;
      continue;
    end if;
    if v_free_idx is null or p_limit - v_held <= v_ahead then
      if p_wait = 1 then
        insert into ${waiters} (key_hash, holder_hash, holder, priority, queued_at, expires_at)
          values (p_key_hash, p_holder_hash, p_holder, p_priority, p_queued_at, p_wait_expires_at)
          on conflict (key_hash, holder_hash) do update set priority = excluded.priority, queued_at = excluded.queued_at, expires_at = excluded.expires_at;
      end if;
      return query select false, case when p_limit - v_held <= 0 then v_free_at end;
      return;
    end if;
    update ${slots} s set holder = p_holder, expires_at = p_expires_at
      where s.key_hash = p_key_hash and s.idx = v_free_idx and (s.holder is null or s.expires_at <= p_now);
    if found then
      if v_waiting > 0 then ${dequeue} end if;
      return query select true, null::bigint;
      return;
    end if;
  end loop;
  raise exception 'slot_acquire: the free slot was taken 8 times in a row';
end
$fn$`;
  const release = `create or replace function "${r.release}"(${postgresSignature(SLOT_RELEASE_PARAMS)})
returns table (next_holder text)
language plpgsql volatile as $fn$
begin
  ${lock}
  update ${slots} s set holder = null, expires_at = 0 where s.key_hash = p_key_hash and s.holder = p_holder;
  ${dequeue}
  return query select w.holder::text from ${waiters} w where w.key_hash = p_key_hash and w.expires_at > p_now
    order by w.priority desc, w.queued_at, w.holder limit 1;
end
$fn$`;
  return [acquire, release];
}

/** Drops the two slot functions (the down of `cairn_0011_slots`). */
export function dropPostgresSlotRoutines(names: TableNames): string[] {
  const r = slotRoutineNames(names.prefix);
  return [
    `drop function if exists "${r.acquire}"(${postgresParamTypes(SLOT_ACQUIRE_PARAMS).join(', ')})`,
    `drop function if exists "${r.release}"(${postgresParamTypes(SLOT_RELEASE_PARAMS).join(', ')})`,
  ];
}
