// `@cairn/core/backend`: what stores and queue adapters are built from, apart from the contract
// types (those are in the main entry, which applications use). See docs/writing-a-backend.md.
export { encodeRunCursor, decodeRunCursor, normaliseListLimit } from '../store/run-cursor.js';
export type { RunCursor } from '../store/run-cursor.js';
export { encodeEndedCursor, decodeEndedCursor } from '../store/ended-cursor.js';
export type { EndedCursor } from '../store/ended-cursor.js';
export { newStepRecord } from '../store/new-step-record.js';
export { toRunSummary } from '../store/run-summary.js';
export { matchesRunQuery } from '../store/matches-run-query.js';
export type { IdOrder } from '../store/matches-run-query.js';
export { reopenedRun } from '../store/reopened-run.js';
export { withArgumentChecks } from '../store/check-store-arguments.js';
export { checkStoreDoctorOptions } from '../store/check-store-doctor-options.js';
export { SignalListeners } from '../store/signal-listeners.js';
export type { ListenerRemoval } from '../store/signal-listeners.js';
export { checkWritableRun } from '../store/check-writable-run.js';
export { runNotFound, leaseLost, runConflict } from '../store/write-rejections.js';
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
