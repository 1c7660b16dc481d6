import { InvalidArgumentError } from 'commander';
import type { Duration, RunStatus } from '@cairn/core';
import { toMilliseconds } from '@cairn/core/backend';

const RUN_STATUSES: readonly RunStatus[] = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'];

/**
 * A point in time given on the command line: an ISO date or date-time (`2026-12-01`,
 * `2026-12-01T10:00:00Z`), or a duration before `now` (`30m`, `2h`, `7d`: that long ago).
 */
export function parseTime(value: string, now: number = Date.now()): number {
  if (/^\d+(\.\d+)?(ms|s|m|h|d)$/.test(value)) {
    try {
      return now - toMilliseconds(value as Duration, 'time');
    } catch {
      throw new InvalidArgumentError(`${JSON.stringify(value)} is too long ago (at most 100 years).`);
    }
  }
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) return ms;
  }
  throw new InvalidArgumentError(`${JSON.stringify(value)} is not a time: use an ISO date (2026-12-01, 2026-12-01T10:00:00Z) or a duration ago (30m, 2h, 7d).`);
}

/** One or more run statuses, comma-separated; repeating the option adds to the list. */
export function parseStatuses(value: string, previous: RunStatus[] = []): RunStatus[] {
  const out = [...previous];
  for (const part of value.split(',')) {
    const status = part.trim();
    if (!RUN_STATUSES.includes(status as RunStatus))
      throw new InvalidArgumentError(`${JSON.stringify(status)} is not a run status (${RUN_STATUSES.join(', ')}).`);
    if (!out.includes(status as RunStatus)) out.push(status as RunStatus);
  }
  return out;
}

/** A whole number in [min, max]. */
export function intIn(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}.`);
    return Number(value);
  };
}

/** `key=value` (split at the first `=`), one tag; repeating the option adds tags (all must match). */
export function parseTagOption(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`${JSON.stringify(value)} is not a tag: use key=value (customer=c-42).`);
  const key = value.slice(0, at);
  if (Object.hasOwn(previous, key)) throw new InvalidArgumentError(`the tag ${JSON.stringify(key)} is given twice.`);
  // A null-prototype copy: a tag named __proto__ is a tag like any other.
  return Object.assign(Object.create(null) as Record<string, string>, previous, { [key]: value.slice(at + 1) });
}
