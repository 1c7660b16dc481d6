// The memory store's per-run state, events and streams (see `StateStore`, `EventStore`,
// `StreamStore`).
import type { EventRecord } from '../model/event.js';
import type { StreamEntry } from '../model/stream.js';
import { isTerminalRunStatus } from '../model/run.js';
import { decideStreamAppend } from '../store/stream-append.js';
import { runNotFound } from '../store/write-rejections.js';
import type { EventStore, StateStore, StreamStore } from '../store/workflow-store.js';
import { copy, type MemoryData } from './memory-data.js';

/** `StateStore` over the memory store's data. */
export function memoryState(data: MemoryData): StateStore {
  return {
    async set(runId, fence, key, value, now) {
      const e = data.writable(runId, fence);
      (e.state ??= new Map()).set(key, copy(value));
      e.run.updatedAt = now;
    },
    async get(runId) {
      const e = data.entry(runId);
      // fromEntries defines own properties, so a key named `__proto__` survives like any other.
      return e?.state ? Object.fromEntries([...e.state].map(([k, v]) => [k, copy(v)])) : {};
    },
  };
}

/** `EventStore` over the memory store's data. */
export function memoryEvents(data: MemoryData): EventStore {
  return {
    async deliver(runId, name, payload, now, options) {
      const e = data.entry(runId);
      if (!e) throw runNotFound(runId);
      const key = options?.idempotencyKey;
      const earlier = key === undefined ? undefined : e.eventKeys?.get(key);
      if (earlier) return { delivered: false, duplicate: true, seq: earlier.seq };
      if (isTerminalRunStatus(e.run.status)) return { delivered: false, duplicate: false };
      const events = (e.events ??= new Map());
      const messages = events.get(name) ?? [];
      const record: EventRecord = { runId, name, seq: messages.length + 1, payload: copy(payload), deliveredAt: now };
      if (key !== undefined) {
        record.idempotencyKey = key;
        (e.eventKeys ??= new Map()).set(key, record);
      }
      messages.push(record);
      events.set(name, messages);
      data.wakeEntry(e, now);
      return { delivered: true, duplicate: false, seq: record.seq };
    },
    async get(runId, name, seq) {
      return copy(data.entry(runId)?.events?.get(name)?.[seq - 1]);
    },
  };
}

/** `StreamStore` over the memory store's data. */
export function memoryStreams(data: MemoryData): StreamStore {
  return {
    async append(runId, fence, entry, now) {
      const e = data.writable(runId, fence);
      e.streams ??= new Map();
      const entries = e.streams.get(entry.stream) ?? [];
      const closed = entries[entries.length - 1]?.closed === true;
      if (decideStreamAppend(runId, closed ? entries.length - 1 : entries.length, closed, entry) === 'exists') return { created: false };
      entries.push(
        entry.close === true
          ? { stream: entry.stream, index: entry.index, closed: true, writtenAt: now }
          : { stream: entry.stream, index: entry.index, data: copy(entry.data), writtenAt: now },
      );
      e.streams.set(entry.stream, entries);
      return { created: true };
    },

    async read(runId, stream, from, limit) {
      const entries = data.entry(runId)?.streams?.get(stream) ?? [];
      return copy(entries.slice(from, from + limit));
    },

    async list(runId) {
      const streams = data.entry(runId)?.streams ?? new Map<string, StreamEntry[]>();
      return [...streams.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([stream, entries]) => {
          const closed = entries[entries.length - 1]?.closed === true;
          return { stream, length: closed ? entries.length - 1 : entries.length, closed };
        });
    },
  };
}
