import type { TableNames } from '../schema/tables.js';

/**
 * Columns SQLite's step rows carry for the triggers below: what the write that last touched the
 * row asked for its attempt records. They are inputs of the triggers, never read by the store.
 */
export const SQLITE_ATTEMPT_COLUMNS = ['start_worker', 'end_status', 'end_output_json', 'end_error_json'] as const;

/** Trigger names of a table prefix. */
function triggerNames(prefix: string) {
  return { open: `${prefix}steps_open_attempt`, transition: `${prefix}steps_attempts` };
}

/**
 * SQLite has no stored procedures; triggers give it the same shape: each step write is ONE
 * statement, and the attempt records it implies are written by a trigger inside that statement,
 * atomically with it.
 *   - Inserting a `running` step opens attempt 1 for `start_worker`.
 *   - A transition names `end_status` and `start_worker` in its SET list (NULL when it does not end
 *     or start an attempt); the trigger first closes attempt `OLD.attempt` when `end_status` is set,
 *     then opens (or reopens) attempt `NEW.attempt` when `start_worker` is set — in that order, so
 *     closing and reopening one attempt number is ordered.
 */
export function sqliteTriggers(names: TableNames): string[] {
  const t = triggerNames(names.prefix);
  const steps = `"${names.steps}"`;
  const attempts = `"${names.attempts}"`;
  return [
    ...SQLITE_ATTEMPT_COLUMNS.map((column) => `alter table ${steps} add column ${column} text`),
    `create trigger "${t.open}" after insert on ${steps} when new.status = 'running'
begin
  insert into ${attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
    values (new.run_id, new.key_hash, 1, new.step_key, new.seq, 'running', new.start_worker, new.created_at);
end`,
    `create trigger "${t.transition}" after update of end_status, start_worker on ${steps}
begin
  update ${attempts} set status = new.end_status, ended_at = new.updated_at,
      output_json = coalesce(new.end_output_json, output_json), error_json = coalesce(new.end_error_json, error_json)
    where new.end_status is not null and run_id = old.run_id and key_hash = old.key_hash and attempt = old.attempt;
  insert into ${attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at)
    select new.run_id, new.key_hash, new.attempt, new.step_key, new.seq, 'running', new.start_worker, new.updated_at
    where new.start_worker is not null
    on conflict (run_id, key_hash, attempt) do update set status = 'running', worker = excluded.worker,
      started_at = excluded.started_at, ended_at = null, output_json = null, error_json = null;
end`,
  ];
}

/** Drops the triggers and their columns (the down migration). */
export function dropSqliteTriggers(names: TableNames): string[] {
  const t = triggerNames(names.prefix);
  return [
    `drop trigger if exists "${t.open}"`,
    `drop trigger if exists "${t.transition}"`,
    ...SQLITE_ATTEMPT_COLUMNS.map((column) => `alter table "${names.steps}" drop column ${column}`),
  ];
}

/** The trigger `cairn_0008_step_finished` adds, and the trigger-input column it reads. */
function finishedTriggerName(prefix: string): string {
  return `${prefix}steps_finished_attempt`;
}

/**
 * `cairn_0008_step_finished` on SQLite: inserting a step already finished (`end_status` set) writes
 * its attempt 1 — outcome `end_status`, worker `start_worker`, started `start_at` (a new trigger
 * input), ended at the insert's time, with `end_output_json` / `end_error_json` — in the same
 * statement. A transition always names `end_status` and `start_worker`, so the values an insert
 * left there never reach the update trigger.
 */
export function sqliteFinishedTrigger(names: TableNames): string[] {
  const steps = `"${names.steps}"`;
  const attempts = `"${names.attempts}"`;
  return [
    `alter table ${steps} add column start_at integer`,
    `create trigger "${finishedTriggerName(names.prefix)}" after insert on ${steps} when new.end_status is not null
begin
  insert into ${attempts} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at, output_json, error_json)
    values (new.run_id, new.key_hash, 1, new.step_key, new.seq, new.end_status, new.start_worker, new.start_at, new.created_at, new.end_output_json, new.end_error_json);
end`,
  ];
}

/** Drops what `sqliteFinishedTrigger` created (the down of `cairn_0008_step_finished`). */
export function dropSqliteFinishedTrigger(names: TableNames): string[] {
  return [dropFinishedTriggerOnly(names), `alter table "${names.steps}" drop column start_at`];
}

/** Drops the trigger of `cairn_0008_step_finished` alone (it reads columns of 0002's triggers). */
export function dropFinishedTriggerOnly(names: TableNames): string {
  return `drop trigger if exists "${finishedTriggerName(names.prefix)}"`;
}
