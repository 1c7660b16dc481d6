// Every check of `createEngine`'s options, in one pass and in the order they were always made
// (the first bad option is the one reported), with the defaults filled in. Kept apart from
// `createEngine` so that the engine's assembly reads as assembly, and so that a refused option is
// refused before anything (a queue, a logger, a listener) has been built.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/system-clock.js';
import { CairnError } from '../errors/cairn-error.js';
import { checkLogger } from '../logging/check-logger.js';
import { consoleLogger, type RuntimeLogger, toRuntimeLogger } from '../logging/runtime-logger.js';
import type { ScheduleDefinition } from '../schedule/define-schedule.js';
import { checkDeclaredSchedules } from '../schedule/check-declared-schedules.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkOptionalBoolean, checkOptions, invalidInput } from './check-input.js';
import type { EngineOptions } from './engine-contract.js';
import { checkEngineDurations } from './engine-durations.js';
import type { EngineTimings } from './engine-runtime.js';
import { checkStartTimeout } from './outage.js';
import { computeQueueNames, type WorkflowQueues } from './queue-names.js';
import { checkRetention, type Retention } from './operations/prune-runs.js';
import { resolveRetryPolicy, type RetryOptions } from './define/retry-policy.js';
import { checkFlowStore } from './flow/run-slot.js';
import type { StickyExecutionOptions } from './execution/sticky-executions.js';
import { WorkflowRegistry } from './workflow-registry.js';

/** The engine's timings when `createEngine({ timings })` sets none. */
export const DEFAULT_TIMINGS: EngineTimings = {
  leaseMs: 30_000,
  inlineRetryMaxMs: 2_000,
  // At most leaseMs, so a lost step job is sent again within the liveness bound (docs/semantics.md).
  dispatchTimeoutMs: 30_000,
  queuedStepTimeoutMs: 300_000,
  childBackstopMs: 3_600_000,
  startGraceMs: 30_000,
  recordStartAfterMs: 250,
  slotRecheckMs: 30_000,
};

/** `createEngine`'s options once checked, with every default applied. */
export interface CheckedEngineOptions {
  /** The registered workflows (each definition checked, versions unique). */
  readonly registry: WorkflowRegistry;
  /** The declared schedules, by name (each naming a registered workflow). */
  readonly declaredSchedules: Map<string, ScheduleDefinition>;
  readonly strategy: 'per-workflow' | 'shared-groups';
  readonly clock: Clock;
  /** Prefixed to every queue name (default none). */
  readonly prefix: string;
  /** The queues of each registered workflow (no two workflows collide on one). */
  readonly queueNames: Map<string, WorkflowQueues>;
  readonly timings: EngineTimings;
  readonly defaultRetry: RetryOptions | undefined;
  readonly retention: Retention | undefined;
  /** The smaller of the option (default 1 MiB) and what the store can hold. */
  readonly maxPayloadBytes: number;
  readonly pollIntervalMs: number;
  readonly recoveryIntervalMs: number;
  /** The option, or `<host>:<pid>:<random>`. */
  readonly workerId: string;
  /** The logger the engine writes through (the option's, or the console), payloads logged or not. */
  readonly logger: RuntimeLogger;
  readonly startTimeoutMs: number;
  /** Kept suspended executions (`stickyExecutions`), or undefined when turned off. */
  readonly sticky: StickyExecutionOptions | undefined;
}

/**
 * Checks `createEngine`'s options and applies their defaults. Throws `CairnError('INVALID_INPUT')`
 * (`QUEUE_NAME_COLLISION` for two workflows on one queue) naming
 * the first option refused (no store; a duration, strategy, prefix, retry default,
 * retention, worker id, logger or start timeout out of shape; a workflow or schedule definition
 * refused; a limited workflow on a store without slots), having built nothing.
 */
export function checkEngineOptions(options: EngineOptions): CheckedEngineOptions {
  if (!options?.store) throw new CairnError('INVALID_INPUT', 'createEngine: a store is required');
  checkEngineDurations(options);
  const registry = new WorkflowRegistry(options.workflows ?? []);
  checkFlowStore(options.store, registry.all());
  const declaredSchedules = checkDeclaredSchedules(options.schedules, (workflow) => registry.current(workflow) !== undefined);
  const strategy = options.queueStrategy ?? 'per-workflow';
  if (strategy !== 'per-workflow' && strategy !== 'shared-groups') throw new CairnError('INVALID_INPUT', `Unknown queueStrategy ${JSON.stringify(strategy)}`);
  const prefix = options.queuePrefix ?? '';
  if (typeof prefix !== 'string') throw invalidInput('createEngine queuePrefix', 'must be a string', prefix);
  const queueNames = computeQueueNames(strategy, registry.names(), prefix);
  const defaultRetry = checkDefaultRetry(options.defaultRetry);
  const retention = checkRetention(options.retention);
  const workerId =
    options.workerId === undefined
      ? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
      : checkIdentifier('createEngine workerId', options.workerId, IDENTIFIER_LIMITS.workerId);
  const logger = toRuntimeLogger(checkLogger(options.logger) ?? consoleLogger, checkOptionalBoolean('createEngine logPayloads', options.logPayloads) ?? false);
  return {
    registry,
    declaredSchedules,
    strategy,
    clock: options.clock ?? systemClock,
    prefix,
    queueNames,
    timings: { ...DEFAULT_TIMINGS, ...options.timings },
    defaultRetry,
    retention,
    maxPayloadBytes: Math.min(options.maxPayloadBytes ?? 1024 * 1024, options.store.capabilities.maxPayloadBytes),
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    recoveryIntervalMs: options.recoveryIntervalMs ?? 2000,
    workerId,
    logger,
    startTimeoutMs: checkStartTimeout(options.startTimeoutMs),
    sticky: checkSticky(options.stickyExecutions),
  };
}

/** `createEngine({ stickyExecutions })`: `false`, or bounds that are positive integers and an `evict` function. */
function checkSticky(value: unknown): StickyExecutionOptions | undefined {
  if (value === false) return undefined;
  if (value === undefined) return {};
  const options = checkOptions('createEngine stickyExecutions', value, ['maxExecutions', 'maxCalls', 'evict']) as StickyExecutionOptions;
  for (const bound of ['maxExecutions', 'maxCalls'] as const) {
    const n = options[bound];
    if (n !== undefined && (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1)) {
      throw invalidInput(`createEngine stickyExecutions.${bound}`, 'must be an integer ≥ 1', n);
    }
  }
  if (options.evict !== undefined && typeof options.evict !== 'function')
    throw invalidInput('createEngine stickyExecutions.evict', 'must be a function', options.evict);
  return options;
}

/** `createEngine({ defaultRetry })`: an object whose options resolve (INVALID_INPUT otherwise). */
function checkDefaultRetry(value: unknown): RetryOptions | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidInput('createEngine defaultRetry', 'must be an object', value);
  const options = value as RetryOptions;
  resolveRetryPolicy(options.retries, options.backoff, options.retryIf);
  return { ...options };
}
