import type { EngineTimings } from './engine-runtime.js';
import { checkMilliseconds } from './define/duration.js';

/** The duration-valued options of `createEngine`, as `EngineOptions` declares them. */
export interface EngineDurationOptions {
  pollIntervalMs?: number;
  recoveryIntervalMs?: number;
  stopGraceMs?: number;
  timings?: Partial<EngineTimings>;
}

const TIMINGS: readonly (keyof EngineTimings)[] = [
  'leaseMs',
  'inlineRetryMaxMs',
  'dispatchTimeoutMs',
  'queuedStepTimeoutMs',
  'childBackstopMs',
  'startGraceMs',
  'recordStartAfterMs',
  'slotRecheckMs',
];

// Intervals the engine re-arms in a loop must be at least 1 ms: 0 would spin.
const AT_LEAST_ONE: ReadonlySet<string> = new Set(['pollIntervalMs', 'recoveryIntervalMs', 'leaseMs', 'slotRecheckMs']);

/**
 * Checks every duration option of `createEngine` before anything is built: each must be a number
 * of milliseconds from 0 (1 for intervals and the lease) up to `MAX_DURATION_MS` (100 years);
 * `stopGraceMs` may also be `Infinity`. Throws `CairnError('INVALID_INPUT')` naming the option.
 */
export function checkEngineDurations(options: EngineDurationOptions): void {
  const check = (value: unknown, name: string, allowInfinity = false, what = name) => {
    if (value !== undefined) checkMilliseconds(value, what, { min: AT_LEAST_ONE.has(name) ? 1 : 0, allowInfinity });
  };
  check(options.pollIntervalMs, 'pollIntervalMs');
  check(options.recoveryIntervalMs, 'recoveryIntervalMs');
  check(options.stopGraceMs, 'stopGraceMs', true);
  for (const name of TIMINGS) check(options.timings?.[name], name, false, `timings.${name}`);
}
