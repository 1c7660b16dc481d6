export { runQueueConformance, allQueueCases, queueSkipReason } from './run-queue-conformance.js';
export type { QueueHarness, QueueChildWorker, QueueConformanceOptions } from './queue-harness.js';
export type { QueueCase, QueueCaseEnv, QueueRequirement } from './queue-case.js';
