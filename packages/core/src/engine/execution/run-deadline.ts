/** Run deadlines: how a deadline is given, and the earliest of a wake time and a deadline. */
import { invalidInput } from '../../errors/invalid-input.js';
import { type Duration, checkWakeTime, toMilliseconds } from '../define/duration.js';

/**
 * A run's deadline as `startRun` and `defineWorkflow` take it: a `Date` (an absolute time; for
 * epoch milliseconds pass `new Date(ms)`), or a `Duration` from the start (`'1h'`, `90_000`). A
 * number is a duration, as everywhere else in Cairn.
 */
export type DeadlineInput = Date | Duration;

/**
 * Resolves a deadline given at `now` to epoch milliseconds. A duration is bounded like every
 * duration (0 up to 100 years); a `Date` must be valid and at most 100 years ahead (a past one is
 * valid: the run fails at its first claim). Throws `CairnError('INVALID_INPUT')` naming `what`.
 */
export function resolveDeadline(value: unknown, now: number, what: string): number {
  if (value instanceof Date) return checkWakeTime(value, now, what);
  if (typeof value === 'number' || typeof value === 'string') return now + toMilliseconds(value as Duration, what);
  throw invalidInput(what, 'must be a Date or a duration (milliseconds, or a string such as "30m")', value);
}

/** The earlier of two optional times; `undefined` only when both are. */
export function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/**
 * A child run's deadline: the earlier of its parent's and its own workflow's default (a duration
 * from `now`, the child's start). A child therefore never outlives a parent's deadline.
 */
export function childDeadline(parentDeadline: number | undefined, childDefault: Duration | undefined, now: number): number | undefined {
  return earliest(parentDeadline, childDefault === undefined ? undefined : now + toMilliseconds(childDefault, 'child workflow deadline'));
}

/** A child's `wakeAt` (never later than its deadline) and its `deadline`, for `runs.create`. */
export function childStart(
  parentDeadline: number | undefined,
  childDefault: Duration | undefined,
  wakeAt: number,
  now: number,
): { wakeAt: number; deadline?: number } {
  const deadline = childDeadline(parentDeadline, childDefault, now);
  return deadline === undefined ? { wakeAt } : { wakeAt: Math.min(wakeAt, deadline), deadline };
}
