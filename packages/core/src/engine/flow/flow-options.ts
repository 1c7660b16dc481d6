import { MAX_SLOT_LIMIT, MAX_SLOT_NAME_LENGTH as MAX_SLOT_KEY } from '../../store/check-slot-arguments.js';
import { checkIdentifier, checkOptions, invalidInput } from '../check-input.js';
import { type Duration, toMilliseconds } from '../define/duration.js';

/**
 * `defineWorkflow(…, { concurrency })`: at most `limit` runs of one key execute at once, across
 * every engine on the store (docs/flow-control.md). A run executes from its claim until it
 * waits, sleeps or ends; a sleeping run gives its slot up.
 */
export interface ConcurrencyLimit<I = unknown> {
  /** Runs of one key executing at once: an integer from 1 to 10,000. */
  limit: number;
  /**
   * The key of a run, from its input (default: one key for the whole workflow). Called when the
   * run is started and again whenever it is claimed, so it must be deterministic: the same input
   * gives the same string. A key that throws or is not a non-empty string fails `startRun` with
   * `INVALID_INPUT`.
   */
  key?: (input: I) => string;
}

/**
 * `defineWorkflow(…, { rateLimit })`: at most `limit` runs of one key start in any window of
 * `period` (a strict sliding window); the others are held back, never dropped.
 */
export interface RateLimit<I = unknown> {
  /** Starts per period: an integer from 1 to 10,000. */
  limit: number;
  /** The window, as a `Duration` (`'1m'`, milliseconds): at least 1 ms. */
  period: Duration;
  /** The key of a run, from its input (default: one key for the whole workflow); as `ConcurrencyLimit.key`. */
  key?: (input: I) => string;
}

/**
 * `ctx.step(…, { rateLimit })`: at most `limit` attempts of steps naming `key` start in any window
 * of `period`, across every run, workflow and engine on the store. A refused attempt waits (in
 * place when the next slot frees within `timings.inlineRetryMaxMs`, else the run sleeps, or a
 * queued step's job is sent again, until then) and does not run its body until it gets one.
 */
export interface StepRateLimit {
  /** What is limited (an outside API, an account): shared by every step naming it. */
  key: string;
  /** Attempts per period: an integer from 1 to 10,000. */
  limit: number;
  /** The window, as a `Duration`: at least 1 ms. */
  period: Duration;
}

/** A rate limit checked: its period in milliseconds. */
export interface CheckedRate {
  limit: number;
  periodMs: number;
}

function checkLimit(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_SLOT_LIMIT) {
    throw invalidInput(`${what} limit`, `must be an integer from 1 to ${MAX_SLOT_LIMIT}`, value);
  }
  return value;
}

function checkPeriod(what: string, value: unknown): number {
  const ms = toMilliseconds(value as Duration, `${what} period`);
  if (ms < 1) throw invalidInput(`${what} period`, 'must be at least 1 ms', value);
  return ms;
}

function checkKeyFunction(what: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') throw invalidInput(`${what} key`, 'must be a function of the input', value);
}

/** Checks `defineWorkflow`'s `concurrency` option (`INVALID_INPUT` otherwise). */
export function checkConcurrency(what: string, value: unknown): void {
  const options = checkOptions(what, value, ['limit', 'key']);
  if (value === undefined) return;
  checkLimit(what, options['limit']);
  checkKeyFunction(what, options['key']);
}

/** Checks `defineWorkflow`'s `rateLimit` option (`INVALID_INPUT` otherwise). */
export function checkRateLimit(what: string, value: unknown): void {
  const options = checkOptions(what, value, ['limit', 'period', 'key']);
  if (value === undefined) return;
  checkLimit(what, options['limit']);
  checkPeriod(what, options['period']);
  checkKeyFunction(what, options['key']);
}

/** Checks `ctx.step`'s `rateLimit` option and returns its store key (`s:<key>`), limit and period. */
export function checkStepRateLimit(what: string, value: unknown): CheckedRate & { key: string } {
  const options = checkOptions(what, value, ['key', 'limit', 'period']);
  const key = `s:${checkIdentifier(`${what} key`, options['key'], MAX_SLOT_KEY - 2)}`;
  return { key, limit: checkLimit(what, options['limit']), periodMs: checkPeriod(what, options['period']) };
}
