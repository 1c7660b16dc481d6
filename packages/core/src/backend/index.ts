// `@cairn/core/backend`: what stores, queue adapters and the tools built on the engine (CLI,
// dashboard, HTTP, OpenTelemetry) are made of: the store and queue contracts and their records, and
// the helpers they share. Applications import from `@cairn/core`. See docs/writing-a-backend.md.
export { encodeRunCursor, decodeRunCursor, normaliseListLimit } from '../store/run-cursor.js';
export type { RunCursor } from '../store/run-cursor.js';
export { encodeEndedCursor, decodeEndedCursor } from '../store/ended-cursor.js';
export type { EndedCursor } from '../store/ended-cursor.js';
export { newStepRecord } from '../store/new-step-record.js';
export { toRunSummary } from '../store/run-summary.js';
export { matchesRunQuery, hasTags } from '../store/matches-run-query.js';
export { decideTagWrite, mergeTags } from '../store/tag-write.js';
export type { IdOrder } from '../store/matches-run-query.js';
export { reopenedRun } from '../store/reopened-run.js';
export { withArgumentChecks } from '../store/check-store-arguments.js';
export { checkStoreDoctorOptions } from '../store/check-store-doctor-options.js';
export { SignalListeners } from '../store/signal-listeners.js';
export type { ListenerRemoval } from '../store/signal-listeners.js';
export { checkWritableRun } from '../store/check-writable-run.js';
export { runNotFound, leaseLost, runConflict } from '../store/write-rejections.js';
export { pausableRun, pauseMark, liftsPause } from '../store/pause-marks.js';
export { serializeJson, toJsonRoundTrip } from '../serialization/json-value.js';
export type { SerializeJsonOptions, SerializedJson, JsonRoundTrip } from '../serialization/json-value.js';
export { toErrorRecord, fromErrorRecord } from '../errors/error-record-codec.js';
export { driverError, callDriver } from '../errors/driver-error.js';
export type { DriverErrorCode } from '../errors/driver-error.js';
export { createOutageLog, errorCause } from '../errors/outage-log.js';
export type { OutageLog } from '../errors/outage-log.js';
export { checkSendOptions, checkWorkOptions } from '../queue/check-queue-options.js';
export type { CheckedSendOptions, CheckedWorkOptions } from '../queue/check-queue-options.js';
export { assertQueueOpen } from '../queue/assert-queue-open.js';
export { reportSafely } from '../queue/report-safely.js';
export { countingStore, COUNTING_STORE_OPTIONAL_MEMBERS } from '../store/counting-store.js';
export type { CountingStore, CountingStoreOptions, CountingStoreOptionalMember, StoreCall, StoreCallForward } from '../store/counting-store.js';
export { decideStreamAppend, streamConflict } from '../store/stream-append.js';
export type { StreamAppendDecision } from '../store/stream-append.js';
export { RESULT_TOPIC, RESULT_RECHECK_MS } from '../engine/wakeups/result-signals.js';
export { WAKE_TOPIC } from '../engine/wakeups/store-wakeups.js';

// The store and queue contracts, their records, and what tools built on the engine read (moved from
// the main entry in 0.3, decision 73).
export type { JsonifyPayload, JsonChecked, JsonGate } from '../serialization/json-types.js';
export type { StandardSchemaV1 } from '../validation/standard-schema.js';
export type { SchemaIssue } from '../validation/validate-payload.js';
export type {
  NewRun,
  ParentRef,
  Lease,
  RunTransition,
  DueRun,
  ForkOrigin,
  RetryRecord,
  ErrorSummary,
  RunReopen,
  EndedRun,
  EndedRunQuery,
  EndedRunPage,
  DeleteCondition,
  PauseChange,
  RunTags,
  TagWrite,
} from '../model/run.js';
export { TERMINAL_RUN_STATUSES } from '../model/run.js';
export type { PauseScope, RunPause, WorkflowPause } from '../model/pause.js';
export type { BulkAction, BulkCounts, BulkFailure, BulkFilter, BulkOperationRecord } from '../model/bulk.js';
export { BULK_ACTIONS, MAX_BULK_FAILURES } from '../model/bulk.js';
export type { BulkProgress, BulkRunOutcome, ResumeBulkOptions } from '../bulk/bulk-options.js';
export type { StepKind, StepStatus, AttemptStatus, AttemptRecord, FinishedAttempt, NewStep, StepTransition } from '../model/step.js';
export type { VersionRecord, VersionStatus } from '../model/version.js';
export type { EventRecord, EventDelivery, DeliverOptions } from '../model/event.js';
export type { NewStreamEntry, StreamEntry, StreamSummary } from '../model/stream.js';
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
} from '../store/workflow-store.js';
export type { DoctorFinding, DoctorSeverity, StoreDoctorOptions, StoreDoctorResult } from '../store/store-doctor.js';
export type { DoctorOptions, DoctorThresholds, DoctorLimits } from '../engine/operations/doctor/doctor-options.js';
export type { Queue, QueueCapabilities, QueueWorker, Job, JobGroup, SendOptions, WorkOptions, GroupConcurrency } from '../queue/queue.js';
export { codecStore } from '../codec/codec-store.js';
export type { CodecStore } from '../codec/codec-store.js';
export { AES_GCM_CODEC } from '../codec/aes-gcm-codec.js';
export type { AesGcmCodecOptions } from '../codec/aes-gcm-codec.js';
export { ENCODED_MARK, isPayloadEnvelope, describeEncoded } from '../codec/payload-codec.js';
export type { PayloadEnvelope, PayloadContext, PayloadKind } from '../codec/payload-codec.js';
export type { Clock } from '../clock/clock.js';
export { systemClock } from '../clock/system-clock.js';
export { MAX_TIMER_MS, sleepInSlices } from '../clock/timer-slices.js';
export type { MemoryStoreOptions } from '../memory/memory-store.js';
export type { LocalQueueOptions } from '../local-queue/create-local-queue.js';
export type { WorkflowOf } from '../engine/define/any-workflow-definition.js';
export type { ConcurrencyLimit, RateLimit, StepRateLimit } from '../engine/flow/flow-options.js';
export type { BatchOption, DebounceOption, SingletonOption } from '../engine/flow/start-options.js';
export type { ChildEndStatus } from '../engine/define/workflow-context.js';
export { DEFAULT_MAX_BACKOFF_MS } from '../engine/define/retry-policy.js';
export type { BackoffOptions, RetryPredicate } from '../engine/define/retry-policy.js';
export { MAX_DURATION_MS, checkMilliseconds, checkWakeTime, toMilliseconds } from '../engine/define/duration.js';
export type { DurationUnit } from '../engine/define/duration.js';
export { IDENTIFIER_LIMITS, checkIdentifier } from '../engine/check-input.js';
export type { IdentifierOptions } from '../engine/check-input.js';
export { checkScheduleOptions, MAX_CATCH_UP_LIMIT } from '../schedule/define-schedule.js';
export type { EngineSchedules } from '../schedule/engine-schedules.js';
export type { EngineVersions, VersionSummary, VersionsSummary, VersionsSummaryOptions } from '../engine/operations/engine-versions.js';
export type { PushedRunResult, PushedStep, PushedWork } from '../engine/execution/pushed-work.js';
export type { StepJob } from '../engine/execution/step-job.js';
export type { ScheduleRecord, ScheduleFiring, ScheduleOverlap, ScheduleCatchUp } from '../model/schedule.js';
export type { SlotGrant, SlotRequest, SlotSnapshot, SlotWait } from '../model/slot.js';
export { checkEventName } from '../engine/define/event-definition.js';
export type { DefineEventOptions, EventSchema } from '../engine/define/event-definition.js';
export type { SendEventOptions } from '../engine/messages/send-event.js';
export { checkRequestName, MAX_REQUEST_NAME } from '../engine/define/request-definition.js';
export type { DefineRequestOptions } from '../engine/define/request-definition.js';
export { REQUEST_WAIT } from '../engine/messages/send-request.js';
export { MAX_QUERY_NAME } from '../engine/messages/reserved-streams.js';
export type { RequestOptions } from '../engine/messages/send-request.js';
export { CONTINUED_AS } from '../engine/define/continued-as.js';
export { MAX_SELECT_ALTERNATIVES } from '../engine/define/select-alternatives.js';
export type { SelectAlternative, SelectResult, SelectOutcome, SelectChildValue } from '../engine/define/select-alternatives.js';
export type { StickyExecutionOptions } from '../engine/execution/sticky-executions.js';
export type { PauseOptions, WorkflowPauseResult, WorkflowResumeResult } from '../engine/operations/pause-runs.js';
export { checkRuns } from '../check/check-runs.js';
export type { CheckOptions } from '../check/check-runs.js';
export type { RunVerdict, Verdict } from '../check/run-verdict.js';
export { exportRun, RUN_EXPORT_FORMAT, RUN_EXPORT_VERSION } from '../check/run-export.js';
export type { RunExport } from '../check/run-export.js';
export type { Divergence, DivergenceCall, DivergenceReason } from '../engine/execution/divergence.js';
export type { PruneOptions, RetentionOptions } from '../engine/operations/prune-runs.js';
export type { DeadlineInput } from '../engine/execution/run-deadline.js';
export { buildRunTimeline } from '../engine/operations/run-timeline.js';
export type { TimelineRun, TimelineStep, TimelineStepKind, TimelineAttempt, TimelineWait, TimelineChild } from '../engine/operations/run-timeline.js';
export type { EngineTimings } from '../engine/engine-runtime.js';
export type { LogData, LogLevel, LogMethod } from '../logging/engine-logger.js';
export type { StringFirstLogger, StringLoggerOptions } from '../logging/from-string-logger.js';
export type { LifecycleBase, LifecycleError, RecoveryLifecycleEvent, StepBase, SuspendReason } from '../observe/lifecycle-events.js';
export { computeQueueNames } from '../engine/queue-names.js';
export type { QueueStrategy, WorkflowQueues } from '../engine/queue-names.js';
export { uuidv7 } from '../engine/uuid.js';
export { STREAM_LIMITS } from '../engine/messages/stream-limits.js';
export { TAG_LIMITS } from '../engine/check-tags.js';
export type { ReadStreamOptions } from '../engine/messages/stream-reader.js';
