export type { Json } from './model/json.js';
export type { ErrorRecord } from './model/error-record.js';
export type {
  RunStatus,
  RunRecord,
  NewRun,
  ParentRef,
  Lease,
  RunQuery,
  RunPage,
  RunTransition,
  DueRun,
} from './model/run.js';
export { TERMINAL_RUN_STATUSES, isTerminalRunStatus } from './model/run.js';
export type {
  StepKind,
  StepStatus,
  StepRecord,
  AttemptStatus,
  AttemptRecord,
  NewStep,
  StepTransition,
} from './model/step.js';
export type { VersionRecord, VersionStatus } from './model/version.js';
export type { EventRecord } from './model/event.js';
export type {
  WorkflowStore,
  RunStore,
  StepStore,
  StateStore,
  EventStore,
  VersionStore,
  HistoryStore,
  StoreCapabilities,
  Fence,
} from './store/workflow-store.js';
export { encodeRunCursor, decodeRunCursor, normaliseListLimit } from './store/run-cursor.js';
export type { RunCursor } from './store/run-cursor.js';
export type {
  Queue,
  QueueCapabilities,
  QueueWorker,
  Job,
  JobGroup,
  SendOptions,
  WorkOptions,
  GroupConcurrency,
} from './queue/queue.js';
export { CairnError } from './errors/cairn-error.js';
export { ERROR_CODES } from './errors/error-codes.js';
export type { ErrorCode } from './errors/error-codes.js';
export type { Clock } from './clock/clock.js';
export { systemClock } from './clock/system-clock.js';
export { createMemoryStore } from "./memory/memory-store.js";
export type { MemoryStoreOptions } from "./memory/memory-store.js";
