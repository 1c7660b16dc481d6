// The memory store's catalog: registered workflow versions and schedules (see `VersionStore`,
// `ScheduleStore`).
import { CairnError } from '../errors/cairn-error.js';
import type { VersionRecord, VersionStatus } from '../model/version.js';
import type { ScheduleStore, VersionStore } from '../store/workflow-store.js';
import { copy, type MemoryData } from './memory-data.js';

/** `VersionStore` over the memory store's data. */
export function memoryVersions(data: MemoryData): VersionStore {
  return {
    async upsert(workflow, version, descriptor, now) {
      const existing = data.versions.get(workflow, version);
      const record: VersionRecord = existing
        ? { ...existing, descriptor: copy(descriptor), updatedAt: now }
        : { workflow, version, status: 'active', descriptor: copy(descriptor), createdAt: now, updatedAt: now };
      data.versions.set(workflow, version, record);
      return copy(record);
    },
    async get(workflow, version) {
      return copy(data.versions.get(workflow, version));
    },
    async list(workflow) {
      return [...data.versions.inner(workflow)].sort((a, b) => a.createdAt - b.createdAt).map(copy);
    },
    async setStatus(workflow, version, status: VersionStatus, now) {
      const existing = data.versions.get(workflow, version);
      if (!existing) throw new CairnError('VERSION_NOT_FOUND', `Version ${version} of ${workflow} is not registered`, { data: { workflow, version } });
      existing.status = status;
      existing.updatedAt = now;
      return copy(existing);
    },
  };
}

/** `ScheduleStore` over the memory store's data. */
export function memorySchedules(data: MemoryData): ScheduleStore {
  return {
    async create(schedule) {
      const existing = data.schedules.get(schedule.name);
      if (existing) return { schedule: copy(existing), created: false };
      const record = { ...copy(schedule), revision: 1 };
      data.schedules.set(record.name, record);
      return { schedule: copy(record), created: true };
    },
    async get(name) {
      return copy(data.schedules.get(name));
    },
    async list({ limit, after }) {
      // Sorted on each call: schedules are few, and a list is an operator's call, not a loop's.
      const names = [...data.schedules.keys()].filter((name) => after === undefined || name > after).sort();
      return names.slice(0, limit).map((name) => copy(data.schedules.get(name)!));
    },
    async update(schedule, expectedRevision) {
      const existing = data.schedules.get(schedule.name);
      if (!existing || existing.revision !== expectedRevision) return undefined;
      const record = { ...copy(schedule), revision: expectedRevision + 1 };
      data.schedules.set(record.name, record);
      return copy(record);
    },
    async delete(name) {
      return data.schedules.delete(name);
    },
    async findDue(now, limit) {
      // A scan is the memory store's index: it holds a test's or a dev process's few data.schedules.
      return [...data.schedules.values()]
        .filter((s) => s.dueAt !== null && s.dueAt <= now)
        .sort((a, b) => a.dueAt! - b.dueAt! || (a.name < b.name ? -1 : 1))
        .slice(0, limit)
        .map(copy);
    },
  };
}
