import type { IndexDescription } from 'mongodb';

/**
 * Every index the store's queries use, on `<prefix>runs`. Steps, attempts, state and events live
 * inside the run document, so replay, history, state and event reads are `_id` lookups and need
 * no index of their own.
 */
export const RUN_INDEXES: IndexDescription[] = [
  // Idempotent create: `idem` is always present (`k:<key>`, or `r:<run id>` without a key), so a
  // plain unique index works; FerretDB v1 has no partial indexes and ignores `sparse`.
  { key: { workflow: 1, idem: 1 }, name: 'cairn_workflow_idem', unique: true },
  // runs.list, newest first, by status, by workflow, and unfiltered (ties ordered by id).
  { key: { status: 1, createdAt: -1, _id: -1 }, name: 'cairn_status_created' },
  { key: { workflow: 1, createdAt: -1, _id: -1 }, name: 'cairn_workflow_created' },
  { key: { createdAt: -1, _id: -1 }, name: 'cairn_created' },
  // runs.list({ parentRunId }): a parent's children, newest first.
  { key: { 'parent.runId': 1, createdAt: -1, _id: -1 }, name: 'cairn_parent_created' },
  // runs.list({ tags }): the runs of a tag, newest first (multikey: one entry per tag token); the
  // other tags of the query, and its other filters, are checked on the documents of that range.
  { key: { tg: 1, createdAt: -1, _id: -1 }, name: 'cairn_tags_created' },
  // runs.listEnded (retention): one terminal status, oldest update first.
  { key: { status: 1, updatedAt: 1, _id: 1 }, name: 'cairn_status_updated' },
  // runs.findDue: dueAt is set only while something is due later, absent on terminal runs.
  { key: { dueAt: 1, _id: 1 }, name: 'cairn_due', sparse: true },
];

/** Indexes of `<prefix>versions`. */
export const VERSION_INDEXES: IndexDescription[] = [
  { key: { workflow: 1, version: 1 }, name: 'cairn_workflow_version', unique: true },
  { key: { workflow: 1, createdAt: 1 }, name: 'cairn_workflow_created' },
];

/** Indexes of `<prefix>schedules` (keyed by name as `_id`): schedules.findDue; `dueAt` is absent while paused. */
export const SCHEDULE_INDEXES: IndexDescription[] = [{ key: { dueAt: 1, _id: 1 }, name: 'cairn_schedule_due', sparse: true }];

/** Indexes of `<prefix>slot_waiters`: a key's waiters in line order (priority desc, queuedAt asc, holder asc). */
export const SLOT_WAITER_INDEXES: IndexDescription[] = [{ key: { k: 1, priority: -1, queuedAt: 1, holder: 1 }, name: 'cairn_slot_line' }];

/** Indexes of `<prefix>stream_entries`: a stream's entries in index order (its reads, its last entry), and a run's entries (list, delete). */
export const STREAM_ENTRY_INDEXES: IndexDescription[] = [{ key: { r: 1, s: 1, i: 1 }, name: 'cairn_stream_entries' }];
