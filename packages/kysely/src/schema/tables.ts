/** The logical tables of the store; each is created as `<tablePrefix><name>`. */
export const TABLES = [
  'runs',
  'steps',
  'attempts',
  'state',
  'events',
  'versions',
  'schedules',
  'slots',
  'slot_waiters',
  'stream_entries',
  'pauses',
  'bulk_operations',
  'run_tags',
] as const;

/** A logical table name. */
export type TableName = (typeof TABLES)[number];

/** The physical name of every table (and the index name prefix) for one table prefix. */
export type TableNames = Readonly<Record<TableName, string>> & { readonly prefix: string };

const PREFIX_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;

/** Validates a table prefix (letters, digits, `_`; at most 40 characters) and names the tables. */
export function tableNames(prefix: string): TableNames {
  if (!PREFIX_PATTERN.test(prefix) && prefix !== '') {
    throw new TypeError(`tablePrefix must match ${PREFIX_PATTERN} (got ${JSON.stringify(prefix)})`);
  }
  return {
    prefix,
    runs: `${prefix}runs`,
    steps: `${prefix}steps`,
    attempts: `${prefix}attempts`,
    state: `${prefix}state`,
    events: `${prefix}events`,
    versions: `${prefix}versions`,
    schedules: `${prefix}schedules`,
    slots: `${prefix}slots`,
    slot_waiters: `${prefix}slot_waiters`,
    stream_entries: `${prefix}stream_entries`,
    pauses: `${prefix}pauses`,
    bulk_operations: `${prefix}bulk_operations`,
    run_tags: `${prefix}run_tags`,
  };
}

/** Terminal run statuses, as the SQL `NOT IN` lists use them. */
export const TERMINAL = ['completed', 'failed', 'cancelled'] as const;

/** A row of `schedules` (created by `cairn_0010_schedules`): the record as JSON, its name, CAS token and due time beside it. */
export interface ScheduleRow {
  name: string;
  revision: number | string;
  due_at: number | string | null;
  record_json: string;
}

/** A row of `slots` (created by `cairn_0011_slots`): slot `idx` of the key whose stored form hashes to `key_hash`. */
export interface SlotRow {
  key_hash: string;
  idx: number | string;
  /** The stored form of the holder (`encodeText`); NULL when free. */
  holder: string | null;
  /** The slot is free once this time has passed, whatever `holder` says. */
  expires_at: number | string;
}

/** A row of `slot_waiters` (created by `cairn_0011_slots`): one holder waiting in line for a key. */
export interface SlotWaiterRow {
  key_hash: string;
  holder_hash: string;
  holder: string;
  priority: number | string;
  queued_at: number | string;
  expires_at: number | string;
}

/** A row of `stream_entries` (created by `cairn_0013_streams`): one entry of a run's named stream. */
export interface StreamEntryRow {
  stream: string;
  idx: number | string;
  data_json: string | null;
  closed: number | string | boolean;
  written_at: number | string;
}

/** A row of `bulk_operations` (created by `cairn_0016_bulk_operations`): one bulk operation, its id the key. */
export interface BulkOperationRow {
  id: string;
  revision: number | string;
  record_json: string;
}

/** A row of `pauses` (created by `cairn_0015_run_pause`): one paused workflow, its name the key. */
export interface PauseRow {
  workflow: string;
  record_json: string;
}

/** A row of `runs` as drivers return it (BIGINT may be a string, booleans are 0/1). */
export interface RunRow {
  id: string;
  workflow: string;
  version: string;
  input_json: string;
  status: string;
  output_json: string | null;
  error_json: string | null;
  parent_run_id: string | null;
  parent_step_key: string | null;
  idempotency_key: string | null;
  idempotency_hash: string | null;
  lease_owner: string | null;
  lease_expires_at: number | string | null;
  fence: number | string;
  cancel_requested: number | string | boolean;
  wake_at: number | string | null;
  due_at: number | string | null;
  created_at: number | string;
  updated_at: number | string;
  /** `RunRecord.deadline` (added by `cairn_0004_run_deadline`); NULL when none. */
  deadline?: number | string | null;
  /** `RunRecord.cancelReason` (added by `cairn_0004_run_deadline`); NULL when none. */
  cancel_reason?: string | null;
  /** `RunRecord.forkedFrom` (added by `cairn_0006_operations`); NULL when none. */
  forked_from_run_id?: string | null;
  forked_from_step_key?: string | null;
  /** `RunRecord.retries` as JSON (added by `cairn_0006_operations`); NULL when never retried. */
  retries_json?: string | null;
  /** `RunRecord.traceContext` as JSON (added by `cairn_0007_run_trace_context`); NULL when none. */
  trace_context_json?: string | null;
  /** `RunRecord.priority` (added by `cairn_0011_slots`); NULL when 0 or absent. */
  priority?: number | string | null;
  /** `RunRecord.paused` as JSON (added by `cairn_0015_run_pause`); NULL when not paused. */
  paused_json?: string | null;
  /** `RunRecord.tags` as JSON (added by `cairn_0017_run_tags`); NULL when none. */
  tags_json?: string | null;
  /** `RunRecord.tagWrites` (added by `cairn_0017_run_tags`); NULL when none. */
  tag_writes?: number | string | null;
}

/**
 * A row of `run_tags` (created by `cairn_0017_run_tags`): one tag of a run, the index `listRuns`
 * finds runs by. `tag_hash` is the SHA-256 of the tag's key and value (`tagHash`), `tag_key` and
 * `tag_value` their stored forms, `run_created_at` the run's `createdAt` (the index orders by it).
 */
export interface RunTagRow {
  run_id: string;
  tag_hash: string;
  tag_key: string;
  tag_value: string;
  run_created_at: number | string;
}

/** A row of `steps`. */
export interface StepRow {
  run_id: string;
  key_hash: string;
  step_key: string;
  name: string;
  kind: string;
  seq: number | string;
  status: string;
  attempt: number | string;
  max_attempts: number | string;
  queued: number | string | boolean;
  output_json: string | null;
  error_json: string | null;
  wake_at: number | string | null;
  child_run_id: string | null;
  created_at: number | string;
  updated_at: number | string;
  /** The delivery turn (added by `cairn_0003_step_turn`); NULL until written. */
  turn: number | string | null;
  /** The fence of the claim that recorded the step (added by `cairn_0008_step_finished`); NULL when none. */
  fence?: number | string | null;
}

/** A row of `attempts`. */
export interface AttemptRow {
  run_id: string;
  key_hash: string;
  attempt: number | string;
  step_key: string;
  step_seq: number | string;
  status: string;
  worker: string | null;
  started_at: number | string;
  ended_at: number | string | null;
  output_json: string | null;
  error_json: string | null;
}

/** A row of `events` (one message; the shape of `cairn_0005_event_messages`). */
export interface EventRow {
  run_id: string;
  name_hash: string;
  seq: number | string;
  name: string;
  payload_json: string;
  delivered_at: number | string;
  idempotency_hash: string | null;
  idempotency_key: string | null;
}

/** A row of `versions`. */
export interface VersionRow {
  workflow: string;
  version: string;
  status: string;
  descriptor_json: string;
  created_at: number | string;
  updated_at: number | string;
}

/** The columns of `runs`, in table order (used to select from joins). */
export const RUN_COLUMNS = [
  'id',
  'workflow',
  'version',
  'input_json',
  'status',
  'output_json',
  'error_json',
  'parent_run_id',
  'parent_step_key',
  'idempotency_key',
  'idempotency_hash',
  'lease_owner',
  'lease_expires_at',
  'fence',
  'cancel_requested',
  'wake_at',
  'due_at',
  'created_at',
  'updated_at',
] as const;

/**
 * The columns of `steps` as `cairn_0001_initial` created them, in table order. The step routines
 * of `cairn_0002_step_routines` name exactly these, and that migration must keep creating what it
 * always did, so this list never changes: later columns go in `STEP_COLUMNS`.
 */
export const STEP_COLUMNS_0001 = [
  'run_id',
  'key_hash',
  'step_key',
  'name',
  'kind',
  'seq',
  'status',
  'attempt',
  'max_attempts',
  'queued',
  'output_json',
  'error_json',
  'wake_at',
  'child_run_id',
  'created_at',
  'updated_at',
] as const;

/**
 * The columns of `steps` after `cairn_0003_step_turn`, in table order: `turn` was added by it
 * (`ALTER TABLE … ADD COLUMN`, hence last; SQLite's trigger columns of `cairn_0002_step_routines`
 * sit before it and are never read). The routines of 0003 name exactly these, so this list never
 * changes.
 */
export const STEP_COLUMNS_0003 = [...STEP_COLUMNS_0001, 'turn'] as const;

/**
 * The columns of `steps` the store reads and writes, in table order: `fence` (the claim that
 * recorded the step, `StepRecord.fence`) was added by `cairn_0008_step_finished`.
 */
export const STEP_COLUMNS = [...STEP_COLUMNS_0003, 'fence'] as const;
