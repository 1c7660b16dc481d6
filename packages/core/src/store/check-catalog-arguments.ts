import { invalidInput } from '../errors/invalid-input.js';
import { checkedCall as checked } from './checked-call.js';
import type { ScheduleStore, VersionStore } from './workflow-store.js';
import { str, optStr, num, obj } from './check-argument-types.js';

// `withArgumentChecks` for what is kept per workflow, not per run: `versions` and `schedules`.

export function checkedVersions(versions: VersionStore): VersionStore {
  return {
    upsert: (workflow, version, descriptor, now) =>
      checked(
        () => {
          str('versions.upsert', 'workflow', workflow);
          str('versions.upsert', 'version', version);
          num('versions.upsert', 'now', now);
        },
        () => versions.upsert(workflow, version, descriptor, now),
      ),
    get: (workflow, version) =>
      checked(
        () => {
          str('versions.get', 'workflow', workflow);
          str('versions.get', 'version', version);
        },
        () => versions.get(workflow, version),
      ),
    list: (workflow) =>
      checked(
        () => {
          str('versions.list', 'workflow', workflow);
        },
        () => versions.list(workflow),
      ),
    setStatus: (workflow, version, status, now) =>
      checked(
        () => {
          str('versions.setStatus', 'workflow', workflow);
          str('versions.setStatus', 'version', version);
          str('versions.setStatus', 'status', status);
          num('versions.setStatus', 'now', now);
        },
        () => versions.setStatus(workflow, version, status, now),
      ),
  };
}

function scheduleRecord(op: string, value: unknown): void {
  const s = obj(op, 'schedule', value);
  for (const field of ['name', 'workflow', 'cron', 'timezone', 'overlap', 'catchUp', 'source'] as const) str(op, `schedule.${field}`, s[field]);
  for (const field of ['nextTickAt', 'catchUpLimit', 'skippedTicks', 'revision', 'createdAt', 'updatedAt'] as const) num(op, `schedule.${field}`, s[field]);
  if (s.dueAt !== null) num(op, 'schedule.dueAt', s.dueAt);
  if (typeof s.paused !== 'boolean') throw invalidInput(`${op}: schedule.paused`, 'must be a boolean', s.paused);
  if (!Array.isArray(s.firing)) throw invalidInput(`${op}: schedule.firing`, 'must be an array', s.firing);
}

export function checkedSchedules(schedules: ScheduleStore): ScheduleStore {
  return {
    create: (schedule) =>
      checked(
        () => scheduleRecord('schedules.create', schedule),
        () => schedules.create(schedule),
      ),
    get: (name) =>
      checked(
        () => str('schedules.get', 'name', name),
        () => schedules.get(name),
      ),
    list: (options) =>
      checked(
        () => {
          const o = obj('schedules.list', 'options', options);
          if (typeof o.limit !== 'number' || !Number.isSafeInteger(o.limit) || o.limit < 1 || o.limit > 1000)
            throw invalidInput('schedules.list: options.limit', 'must be an integer from 1 to 1000', o.limit);
          optStr('schedules.list', 'options.after', o.after);
        },
        () => schedules.list(options),
      ),
    update: (schedule, expectedRevision) =>
      checked(
        () => {
          scheduleRecord('schedules.update', schedule);
          num('schedules.update', 'expectedRevision', expectedRevision);
        },
        () => schedules.update(schedule, expectedRevision),
      ),
    delete: (name) =>
      checked(
        () => str('schedules.delete', 'name', name),
        () => schedules.delete(name),
      ),
    findDue: (now, limit) =>
      checked(
        () => {
          num('schedules.findDue', 'now', now);
          num('schedules.findDue', 'limit', limit);
        },
        () => schedules.findDue(now, limit),
      ),
  };
}
