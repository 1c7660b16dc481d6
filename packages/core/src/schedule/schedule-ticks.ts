import type { ScheduleRecord } from '../model/schedule.js';
import type { CronTicks } from './cron-ticks.js';

/** A tick later than this after its time counts as missed (`catchUp: 'none'` drops it). */
export const ON_TIME_MS = 60_000;

/** Ticks enumerated one by one in a pass at most; past this the missed ones are dropped uncounted. */
const MAX_ENUMERATED = 10_000;

/** Which of a schedule's due ticks start runs, and how many were dropped. */
export interface DueTicks {
  /** Ticks to start runs for (before overlap), oldest first. */
  fire: number[];
  /** Due ticks the catch-up policy dropped (at least; see `MAX_ENUMERATED`). */
  dropped: number;
  /** The first tick after `now`, or `undefined` when the expression has no more. */
  next: number | undefined;
}

/**
 * The due ticks of `schedule` (from `nextTickAt` through `now`) and what its catch-up policy keeps:
 * `none` the latest only if it is on time (within `ON_TIME_MS`), `latest` the latest, `all` the
 * latest `catchUpLimit`.
 */
export function dueTicks(schedule: ScheduleRecord, ticks: CronTicks, now: number): DueTicks {
  const keep = schedule.catchUp === 'all' ? schedule.catchUpLimit : 1;
  const due: number[] = [];
  let count = 0;
  let tick: number | undefined = schedule.nextTickAt;
  while (tick !== undefined && tick <= now && count < MAX_ENUMERATED) {
    due.push(tick);
    if (due.length > keep) due.shift();
    count += 1;
    tick = ticks.next(tick);
  }
  if (tick !== undefined && tick <= now) {
    // Too many to walk: keep the latest ones, found walking from a window before `now`.
    due.length = 0;
    for (let window = 60_000; due.length < keep; window *= 2) {
      due.length = 0;
      for (let t = ticks.next(now - window - 1); t !== undefined && t <= now; t = ticks.next(t)) {
        due.push(t);
        if (due.length > keep) due.shift();
      }
      if (window > now) break;
    }
  }
  const next = ticks.next(now);
  let fire = due;
  if (schedule.catchUp === 'none') fire = due.length > 0 && now - due[due.length - 1]! <= ON_TIME_MS ? [due[due.length - 1]!] : [];
  return { fire, dropped: count - fire.length, next };
}
