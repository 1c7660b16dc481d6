import { channel } from 'node:diagnostics_channel';
import type { Clock } from '../clock/clock.js';
import type { ErrorRecord } from '../model/error-record.js';
import type { Json } from '../model/json.js';
import type { RunRecord } from '../model/run.js';
import type { LogLevel } from '../logging/engine-logger.js';
import type { RuntimeLogger } from '../logging/runtime-logger.js';
import {
  CAIRN_CHANNELS,
  type LifecycleBase,
  type LifecycleError,
  type StepBase,
  type RecoveryLifecycleEvent,
  type RunLifecycleEvent,
  type StepLifecycleEvent,
} from './lifecycle-events.js';

const runChannel = channel(CAIRN_CHANNELS.run);
const stepChannel = channel(CAIRN_CHANNELS.step);
const recoveryChannel = channel(CAIRN_CHANNELS.recovery);

// Run ends, creations and an operator's pauses are worth a line at info; the rest of the lifecycle is debug.
const RUN_LEVEL: Record<RunLifecycleEvent['type'], LogLevel> = {
  'run.created': 'info',
  'run.started': 'debug',
  'run.resumed': 'debug',
  'run.suspended': 'debug',
  'run.completed': 'info',
  'run.failed': 'info',
  'run.cancelled': 'info',
  'run.paused': 'info',
  'run.unpaused': 'info',
  'run.lease-lost': 'info',
};

/**
 * Publishes lifecycle events (see `lifecycle-events.ts`) and logs them (`info` for a run's
 * creation and end, `debug` for the rest). Callers check `runs` / `steps` / `recovery` first and
 * build nothing when they are false: no subscriber on the channel and the level disabled.
 */
export class Lifecycle {
  constructor(
    private readonly logger: RuntimeLogger,
    private readonly clock: Clock,
    readonly workerId: string,
    private readonly store: string,
  ) {}

  /** Someone wants run events. */
  get runs(): boolean {
    return runChannel.hasSubscribers || this.logger.enabled('info') || this.logger.enabled('debug');
  }

  get steps(): boolean {
    return stepChannel.hasSubscribers || this.logger.enabled('debug');
  }

  get recovery(): boolean {
    return recoveryChannel.hasSubscribers || this.logger.enabled('debug');
  }

  /** The fields every run and step message shares. */
  base(run: RunRecord): LifecycleBase {
    const base: LifecycleBase = {
      runId: run.id,
      workflow: run.workflow,
      version: run.version,
      workerId: this.workerId,
      store: this.store,
      at: this.clock.now(),
    };
    if (run.traceContext !== undefined) base.traceContext = run.traceContext;
    return base;
  }

  /** The fields every step message shares. */
  stepBase(run: RunRecord, stepKey: string, attempt: number, queued: boolean): StepBase {
    return { ...this.base(run), stepKey, attempt, queued };
  }

  /** `payload`: logged (as `input` or `output`) only with `logPayloads`; never published. */
  run(event: RunLifecycleEvent, payload?: { input?: Json; output?: Json }): void {
    if (runChannel.hasSubscribers) runChannel.publish(event);
    const level = RUN_LEVEL[event.type];
    if (this.logger.enabled(level))
      this.logger[level](this.logger.payloads && payload ? { ...event, ...payload } : { ...event }, `Run ${event.runId}: ${event.type.slice(4)}`);
  }

  step(event: StepLifecycleEvent, payload?: { output?: Json }): void {
    if (stepChannel.hasSubscribers) stepChannel.publish(event);
    if (this.logger.enabled('debug'))
      this.logger.debug(
        this.logger.payloads && payload ? { ...event, ...payload } : { ...event },
        `Run ${event.runId}: step ${event.stepKey} attempt ${event.attempt} ${event.type.slice(5)}`,
      );
  }

  recovered(event: RecoveryLifecycleEvent): void {
    if (recoveryChannel.hasSubscribers) recoveryChannel.publish(event);
    if (this.logger.enabled('debug')) this.logger.debug({ ...event }, `Run ${event.runId}: dispatched by recovery (${event.reason})`);
  }
}

/** An error as events carry it: name, message and code only. */
export function lifecycleError(error: unknown): LifecycleError {
  const record = error as (Partial<ErrorRecord> & { code?: unknown }) | null;
  const out: LifecycleError = {
    name: typeof record?.name === 'string' ? record.name : 'Error',
    message: typeof record?.message === 'string' ? record.message : String(error),
  };
  if (typeof record?.code === 'string') out.code = record.code;
  return out;
}
