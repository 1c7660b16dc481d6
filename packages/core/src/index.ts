// `@cairn/core`: what an application writes — workflows and their definitions, the engine and its
// options, the context a workflow body gets, errors, and the records an application reads back.
// Store and queue contracts, their records and the helpers backends and tools share are in
// `@cairn/core/backend`; test clocks and fault injection in `@cairn/core/testing` (decision 73).
// test/entry-exports/main.txt lists these names: growth shows as a diff.

// Workflows and what they are built from.
export { defineWorkflow } from './engine/define/define-workflow.js';
export type { WorkflowDefinition, WorkflowOptions } from './engine/define/define-workflow.js';
export type { AnyWorkflowDefinition } from './engine/define/any-workflow-definition.js';
export type {
  WorkflowContext,
  WorkflowStream,
  ReceivedRequest,
  StepContext,
  StepOptions,
  WaitForEventOptions,
  ChildOptions,
  ChildOutcome,
  StartChildOptions,
} from './engine/define/workflow-context.js';
export type { RetryOptions } from './engine/define/retry-policy.js';
export type { Duration } from './engine/define/duration.js';
export { continuedAs } from './engine/define/continued-as.js';
export { defineEvent } from './engine/define/event-definition.js';
export type { EventDefinition } from './engine/define/event-definition.js';
export { defineRequest } from './engine/define/request-definition.js';
export type { RequestDefinition } from './engine/define/request-definition.js';
export { defineSchedule } from './schedule/define-schedule.js';
export type { ScheduleOptions, ScheduleDefinition } from './schedule/define-schedule.js';

// The engine, its options, and what its methods take.
export { createEngine } from './engine/engine.js';
export type { Engine, EngineOptions, StartOptions, CancelOptions, RunHandle, HistoryEntry } from './engine/engine.js';
export type { RetryRunOptions } from './engine/operations/retry-run.js';
export type { ForkOptions } from './engine/operations/fork-run.js';
export type { BulkOptions, BulkResult } from './bulk/bulk-options.js';
export { createMemoryStore } from './memory/memory-store.js';
export { createLocalQueue } from './local-queue/create-local-queue.js';
export { aesGcmCodec } from './codec/aes-gcm-codec.js';
export type { PayloadCodec } from './codec/payload-codec.js';
export type { EngineLogger } from './logging/engine-logger.js';
export { fromStringLogger } from './logging/from-string-logger.js';
export { CAIRN_CHANNELS } from './observe/lifecycle-events.js';
export type { CairnLifecycleEvent, RunLifecycleEvent, StepLifecycleEvent } from './observe/lifecycle-events.js';
export { checkWorkflowCode } from './check/check-runs.js';
export type { CheckReport } from './check/check-runs.js';

// What an application reads back.
export type { Json } from './model/json.js';
export type { Jsonify } from './serialization/json-types.js';
export type { RunStatus, RunRecord, RunQuery, RunPage, RunSummary } from './model/run.js';
export { isTerminalRunStatus } from './model/run.js';
export type { StepRecord } from './model/step.js';
export type { ErrorRecord } from './model/error-record.js';
export type { StreamChunk } from './model/stream.js';
export type { QueryAnswer } from './engine/messages/query-run.js';
export type { RunTimeline } from './engine/operations/run-timeline.js';
export type { DoctorReport } from './engine/operations/doctor/doctor-options.js';

// Errors.
export { CairnError } from './errors/cairn-error.js';
export { ERROR_CODES } from './errors/error-codes.js';
export type { ErrorCode } from './errors/error-codes.js';
export { NonRetryableError, RetryAfterError, isNonRetryable } from './errors/retry-errors.js';
