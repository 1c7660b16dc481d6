export type { Json } from './model/json.js';
export type { Jsonify, JsonifyPayload, JsonChecked, JsonGate } from './serialization/json-types.js';
export type { StandardSchemaV1 } from './validation/standard-schema.js';
export type { SchemaIssue } from './validation/validate-payload.js';
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
  ForkOrigin,
  RetryRecord,
  ErrorSummary,
  RunSummary,
  RunReopen,
  EndedRun,
  EndedRunQuery,
  EndedRunPage,
  DeleteCondition,
  PauseChange,
  RunTags,
  TagWrite,
} from './model/run.js';
export { TERMINAL_RUN_STATUSES, isTerminalRunStatus } from './model/run.js';
export type { PauseScope, RunPause, WorkflowPause } from './model/pause.js';
export type { BulkAction, BulkCounts, BulkFailure, BulkFilter, BulkOperationRecord } from './model/bulk.js';
export { BULK_ACTIONS, MAX_BULK_FAILURES } from './model/bulk.js';
export type { BulkOptions, BulkProgress, BulkResult, BulkRunOutcome, ResumeBulkOptions } from './bulk/bulk-options.js';
export type {
  StepKind,
  StepStatus,
  StepRecord,
  AttemptStatus,
  AttemptRecord,
  FinishedAttempt,
  NewStep,
  StepTransition,
} from './model/step.js';
export type { VersionRecord, VersionStatus } from './model/version.js';
export type { EventRecord, EventDelivery, DeliverOptions } from './model/event.js';
export type { NewStreamEntry, StreamEntry, StreamSummary, StreamChunk } from './model/stream.js';
export type {
  WorkflowStore,
  RunStore,
  StepStore,
  StateStore,
  StreamStore,
  EventStore,
  VersionStore,
  ScheduleStore,
  SlotStore,
  HistoryStore,
  StoreCapabilities,
  StoreSignals,
  PauseStore,
  BulkStore,
  Fence,
} from './store/workflow-store.js';
export type { DoctorFinding, DoctorSeverity, StoreDoctorOptions, StoreDoctorResult } from './store/store-doctor.js';
export type { DoctorOptions, DoctorReport, DoctorThresholds, DoctorLimits } from './engine/doctor/doctor-options.js';
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
export { codecStore } from './codec/codec-store.js';
export type { CodecStore } from './codec/codec-store.js';
export { aesGcmCodec, AES_GCM_CODEC } from './codec/aes-gcm-codec.js';
export type { AesGcmCodecOptions } from './codec/aes-gcm-codec.js';
export { ENCODED_MARK, isPayloadEnvelope, describeEncoded } from './codec/payload-codec.js';
export type { PayloadCodec, PayloadEnvelope, PayloadContext, PayloadKind } from './codec/payload-codec.js';
export { NonRetryableError, RetryAfterError, isNonRetryable } from './errors/retry-errors.js';
export type { ErrorCode } from './errors/error-codes.js';
export type { Clock } from './clock/clock.js';
export { systemClock } from './clock/system-clock.js';
export { MAX_TIMER_MS, sleepInSlices } from './clock/timer-slices.js';
export { createMemoryStore } from './memory/memory-store.js';
export type { MemoryStoreOptions } from './memory/memory-store.js';
export { createLocalQueue } from './local-queue/create-local-queue.js';
export type { LocalQueueOptions } from './local-queue/create-local-queue.js';
export { defineWorkflow } from './engine/define-workflow.js';
export type { WorkflowDefinition, WorkflowOptions } from './engine/define-workflow.js';
export type { AnyWorkflowDefinition, WorkflowOf } from './engine/any-workflow-definition.js';
export type { ConcurrencyLimit, RateLimit, StepRateLimit } from './engine/flow-options.js';
export type { BatchOption, DebounceOption, SingletonOption } from './engine/start-options.js';
export type {
  WorkflowContext,
  WorkflowStream,
  ReceivedRequest,
  StepContext,
  StepOptions,
  WaitForEventOptions,
  ChildOptions,
  ChildOutcome,
  ChildEndStatus,
  StartChildOptions,
} from './engine/workflow-context.js';
export { DEFAULT_MAX_BACKOFF_MS } from './engine/retry-policy.js';
export type { BackoffOptions, RetryOptions, RetryPredicate } from './engine/retry-policy.js';
export { MAX_DURATION_MS, checkMilliseconds, checkWakeTime, toMilliseconds } from './engine/duration.js';
export type { Duration, DurationUnit } from './engine/duration.js';
export { IDENTIFIER_LIMITS, checkIdentifier } from './engine/check-input.js';
export type { IdentifierOptions } from './engine/check-input.js';
export { createEngine } from './engine/engine.js';
export { defineSchedule, checkScheduleOptions, MAX_CATCH_UP_LIMIT } from './schedule/define-schedule.js';
export type { ScheduleOptions, ScheduleDefinition } from './schedule/define-schedule.js';
export type { EngineSchedules } from './schedule/engine-schedules.js';
export type { EngineVersions, VersionSummary, VersionsSummary, VersionsSummaryOptions } from './engine/engine-versions.js';
export type { PushedRunResult, PushedStep, PushedWork } from './engine/pushed-work.js';
export type { StepJob } from './engine/step-job.js';
export type { ScheduleRecord, ScheduleFiring, ScheduleOverlap, ScheduleCatchUp } from './model/schedule.js';
export type { SlotGrant, SlotRequest, SlotSnapshot, SlotWait } from './model/slot.js';
export { checkEventName, defineEvent } from './engine/event-definition.js';
export type { DefineEventOptions, EventDefinition, EventSchema } from './engine/event-definition.js';
export type { SendEventOptions } from './engine/send-event.js';
export { checkRequestName, defineRequest, MAX_REQUEST_NAME } from './engine/request-definition.js';
export type { DefineRequestOptions, RequestDefinition } from './engine/request-definition.js';
export { REQUEST_WAIT } from './engine/send-request.js';
export type { QueryAnswer } from './engine/query-run.js';
export { MAX_QUERY_NAME } from './engine/reserved-streams.js';
export type { RequestOptions } from './engine/send-request.js';
export { CONTINUED_AS, continuedAs } from './engine/continued-as.js';
export { MAX_SELECT_ALTERNATIVES } from './engine/select-alternatives.js';
export type { SelectAlternative, SelectResult, SelectOutcome, SelectChildValue } from './engine/select-alternatives.js';
export type { Engine, EngineOptions, StartOptions, CancelOptions, RunHandle, HistoryEntry } from './engine/engine.js';
export type { StickyExecutionOptions } from './engine/sticky-executions.js';
export type { RetryRunOptions } from './engine/retry-run.js';
export type { PauseOptions, WorkflowPauseResult, WorkflowResumeResult } from './engine/pause-runs.js';
export { checkRuns, checkWorkflowCode } from './check/check-runs.js';
export type { CheckOptions, CheckReport } from './check/check-runs.js';
export type { RunVerdict, Verdict } from './check/run-verdict.js';
export { exportRun, RUN_EXPORT_FORMAT, RUN_EXPORT_VERSION } from './check/run-export.js';
export type { RunExport } from './check/run-export.js';
export type { Divergence, DivergenceCall, DivergenceReason } from './engine/execution/divergence.js';
export type { ForkOptions } from './engine/fork-run.js';
export type { PruneOptions, RetentionOptions } from './engine/prune-runs.js';
export type { DeadlineInput } from './engine/run-deadline.js';
export { buildRunTimeline } from './engine/run-timeline.js';
export type { RunTimeline, TimelineRun, TimelineStep, TimelineStepKind, TimelineAttempt, TimelineWait, TimelineChild } from './engine/run-timeline.js';
export type { EngineTimings } from './engine/engine-runtime.js';
export type { EngineLogger, LogData, LogLevel, LogMethod } from './logging/engine-logger.js';
export { fromStringLogger } from './logging/from-string-logger.js';
export type { StringFirstLogger, StringLoggerOptions } from './logging/from-string-logger.js';
export { CAIRN_CHANNELS } from './observe/lifecycle-events.js';
export type {
  CairnLifecycleEvent,
  LifecycleBase,
  LifecycleError,
  RecoveryLifecycleEvent,
  RunLifecycleEvent,
  StepBase,
  StepLifecycleEvent,
  SuspendReason,
} from './observe/lifecycle-events.js';
export { computeQueueNames } from './engine/queue-names.js';
export type { QueueStrategy, WorkflowQueues } from './engine/queue-names.js';
export type { FaultPoint, FaultSite, FaultInjector } from './engine/fault-point.js';
export { uuidv7 } from './engine/uuid.js';
export { STREAM_LIMITS } from './engine/stream-limits.js';
export { TAG_LIMITS } from './engine/check-tags.js';
export type { ReadStreamOptions } from './engine/stream-reader.js';
