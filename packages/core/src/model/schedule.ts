import type { Json } from './json.js';

/** What a tick does while the schedule's previous run is still active. */
export type ScheduleOverlap = 'skip' | 'allow' | 'buffer-one';

/** Which ticks missed during a downtime (or a slow pass) still start a run. */
export type ScheduleCatchUp = 'none' | 'latest' | 'all';

/** A tick decided and not yet known to have started its run (the schedule's outbox). */
export interface ScheduleFiring {
  /** The tick's time (epoch ms); a run started now by `trigger` carries the time of the call. */
  tickAt: number;
  /** The run's idempotency key: `schedule:<name>:<tick ISO time>` (or `…:trigger:<id>`). */
  key: string;
}

/**
 * A schedule as stored. `revision` is the compare-and-set token of `ScheduleStore.update`;
 * `dueAt` is the indexed time a schedule loop next has to look at it (`null` when paused).
 */
export interface ScheduleRecord {
  name: string;
  workflow: string;
  /** A cron expression (5 fields, or 6 with seconds first), read by croner. */
  cron: string;
  /** An IANA time zone the cron expression is read in. */
  timezone: string;
  /** The fixed input of every run; `null` with `computedInput`. */
  input: Json;
  /** The input is computed from the tick by code given to `defineSchedule` (engines that declare it fire it). */
  computedInput: boolean;
  overlap: ScheduleOverlap;
  catchUp: ScheduleCatchUp;
  /** With `catchUp: 'all'`: at most this many missed ticks start runs (the latest ones). */
  catchUpLimit: number;
  /** `code`: declared with `createEngine({ schedules })`; `api`: created through `engine.schedules.create`. */
  source: 'code' | 'api';
  paused: boolean;
  /** The next tick not yet handled (epoch ms). */
  nextTickAt: number;
  /** When a loop must look at the schedule next: `nextTickAt`, earlier while a firing or buffered tick waits, `null` when paused. */
  dueAt: number | null;
  /** Ticks decided whose runs may not have been created yet (created idempotently by whoever sees them). */
  firing: ScheduleFiring[];
  /** With `overlap: 'buffer-one'`: the tick waiting for the active run to end. */
  bufferedTickAt: number | null;
  /** The run the schedule started last. */
  lastRunId: string | null;
  lastTickAt: number | null;
  /** How many ticks were skipped (overlap `skip`, a second buffered tick, or missed ticks the catch-up policy dropped). */
  skippedTicks: number;
  lastSkippedTickAt: number | null;
  revision: number;
  createdAt: number;
  updatedAt: number;
}
