import type { Clock } from '../clock/clock.js';
import type { RuntimeLogger } from '../logging/runtime-logger.js';
import { isTerminalRunStatus } from '../model/run.js';
import type { ScheduleFiring, ScheduleRecord } from '../model/schedule.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import { cronTicks, type CronTicks } from './cron-ticks.js';
import type { ScheduleDefinition } from './define-schedule.js';
import { dueTicks } from './schedule-ticks.js';

/** What the schedule runner needs of its engine. */
export interface ScheduleRunnerDeps {
  store: WorkflowStore;
  clock: Clock;
  logger: RuntimeLogger;
  workerId: string;
  /** Schedules this engine declared in code (their computed inputs live here). */
  declared: ReadonlyMap<string, ScheduleDefinition>;
  /** Whether this engine registers the workflow (a schedule of another's workflow is left to it). */
  runs(workflow: string): boolean;
  /** Starts (or finds, by its idempotency key) the tick's run; returns its id. */
  startRun(workflow: string, input: unknown, idempotencyKey: string): Promise<string>;
}

/**
 * How long an idle engine goes without reading the schedules: a schedule created by another process
 * is found within this (its ticks are then still on time, see ON_TIME_MS).
 */
export const DISCOVERY_MS = 30_000;
/** Schedules handled in one pass at most. */
const PASS_LIMIT = 100;
/** Compare-and-set rounds on one schedule before a pass leaves it to the next. */
const MAX_ROUNDS = 8;

/** The idempotency key of a tick's run. */
export const tickKey = (name: string, tickAt: number): string => `schedule:${name}:${new Date(tickAt).toISOString()}`;

/** When a loop must look at `s` next (see `ScheduleRecord.dueAt`). */
export function dueAtOf(s: Pick<ScheduleRecord, 'paused' | 'firing' | 'bufferedTickAt' | 'nextTickAt'>, now: number, hasNext = true): number | null {
  if (s.firing.length > 0) return now;
  if (s.bufferedTickAt !== null) return now;
  if (s.paused || !hasNext) return null;
  return s.nextTickAt;
}

/**
 * Fires schedules: one pass takes the due ones (by the `dueAt` index) and, for each, first starts
 * the runs of ticks already decided (`firing`, idempotent by key), then decides the due ticks
 * (catch-up, then overlap) and writes that decision by compare-and-set on `revision`. Of engines
 * racing on one tick exactly one decision lands; each run is created once, by its key.
 */
export function createScheduleRunner(deps: ScheduleRunnerDeps) {
  const parsed = new Map<string, CronTicks>();
  const ticksOf = (s: ScheduleRecord): CronTicks => {
    const id = `${s.timezone}\n${s.cron}`;
    let ticks = parsed.get(id);
    if (!ticks) parsed.set(id, (ticks = cronTicks(`schedule ${JSON.stringify(s.name)}`, s.cron, s.timezone)));
    return ticks;
  };

  const isActive = async (runId: string | null): Promise<boolean> => {
    if (runId === null) return false;
    const run = await deps.store.runs.get(runId);
    return run !== undefined && !isTerminalRunStatus(run.status);
  };

  /** Starts the runs of `s.firing`; `undefined` when this engine cannot compute their input. */
  const startFiring = async (s: ScheduleRecord): Promise<Map<string, string> | undefined> => {
    const declared = deps.declared.get(s.name);
    if (s.computedInput && !declared?.computeInput) return undefined;
    const started = new Map<string, string>();
    for (const firing of s.firing) {
      const input = s.computedInput ? declared!.computeInput!(new Date(firing.tickAt)) : s.input;
      started.set(firing.key, await deps.startRun(s.workflow, input, firing.key));
    }
    return started;
  };

  /** The schedule after deciding its due ticks at `now`, or `undefined` when nothing changes. */
  const decide = async (s: ScheduleRecord, now: number): Promise<ScheduleRecord | undefined> => {
    const firing: ScheduleFiring[] = [];
    let { bufferedTickAt, skippedTicks, lastSkippedTickAt, nextTickAt } = s;
    let active = s.overlap === 'allow' ? false : await isActive(s.lastRunId);
    if (bufferedTickAt !== null && !active) {
      firing.push({ tickAt: bufferedTickAt, key: tickKey(s.name, bufferedTickAt) });
      bufferedTickAt = null;
      active = true;
    }
    let hasNext = true;
    if (!s.paused && s.nextTickAt <= now) {
      const due = dueTicks(s, ticksOf(s), now);
      skippedTicks += due.dropped;
      for (const tick of due.fire) {
        if (s.overlap === 'allow' || !active) {
          firing.push({ tickAt: tick, key: tickKey(s.name, tick) });
          active = true;
        } else if (s.overlap === 'buffer-one' && bufferedTickAt === null) {
          bufferedTickAt = tick;
        } else {
          skippedTicks += 1;
          lastSkippedTickAt = tick;
        }
      }
      if (due.dropped > 0 && lastSkippedTickAt === s.lastSkippedTickAt) lastSkippedTickAt = s.nextTickAt;
      hasNext = due.next !== undefined;
      nextTickAt = due.next ?? now;
    } else if (firing.length === 0) {
      return undefined;
    }
    const next = { ...s, firing, bufferedTickAt, skippedTicks, lastSkippedTickAt, nextTickAt, updatedAt: now };
    return { ...next, dueAt: dueAtOf(next, now, hasNext) };
  };

  /** Handles one schedule; returns the runs it started or found, by idempotency key. */
  const handle = async (initial: ScheduleRecord): Promise<Map<string, string>> => {
    let s: ScheduleRecord | undefined = initial;
    const started = new Map<string, string>();
    for (let round = 0; s && round < MAX_ROUNDS; round += 1) {
      const now = deps.clock.now();
      if (s.firing.length > 0) {
        const runs = await startFiring(s);
        if (!runs) return started;
        const last = s.firing[s.firing.length - 1]!;
        const cleared = { ...s, firing: [], lastRunId: runs.get(last.key)!, lastTickAt: last.tickAt, updatedAt: now };
        const written = await deps.store.schedules.update({ ...cleared, dueAt: dueAtOf(cleared, now) }, s.revision);
        for (const [key, runId] of runs) started.set(key, runId);
        s = written ?? (await deps.store.schedules.get(s.name));
        continue;
      }
      if (s.dueAt === null || s.dueAt > now) return started;
      const decided = await decide(s, now);
      if (!decided) return started;
      s = (await deps.store.schedules.update(decided, s.revision)) ?? (await deps.store.schedules.get(s.name));
    }
    return started;
  };

  // When the recovery loop next needs a schedule pass: the earliest due time last seen, at the
  // latest DISCOVERY_MS after the last look (schedules created by other processes are found then).
  let checkAt = 0;

  /** One pass: handles every due schedule of a workflow this engine runs. Returns the runs started. */
  const pass = async (): Promise<number> => {
    const now = deps.clock.now();
    // The earliest PASS_LIMIT by due time, due or not: one indexed read that also says when to look next.
    const earliest = await deps.store.schedules.findDue(Number.MAX_SAFE_INTEGER, PASS_LIMIT);
    const due = earliest.filter((s) => s.dueAt !== null && s.dueAt <= now);
    const later = earliest.find((s) => s.dueAt !== null && s.dueAt > now)?.dueAt ?? Infinity;
    // After handling due ones their next times are unknown here: look again at the next pass.
    checkAt = due.length > 0 ? now : Math.min(later, now + DISCOVERY_MS);
    let started = 0;
    for (const s of due) {
      if (!deps.runs(s.workflow)) continue;
      try {
        started += (await handle(s)).size;
      } catch (error) {
        deps.logger.error({ workerId: deps.workerId, schedule: s.name, err: error }, `Schedule ${s.name}: pass failed`);
      }
    }
    return started;
  };

  return {
    handle,
    pass,
    /** A pass when one is needed (a schedule is due, or DISCOVERY_MS passed since the last look); else nothing, no store call. */
    async passIfDue(): Promise<number> {
      return deps.clock.now() >= checkAt ? pass() : 0;
    },
    /** Asks for a pass by `at` (a schedule created, resumed or declared here). */
    lookBy(at: number | null): void {
      if (at !== null) checkAt = Math.min(checkAt, at);
    },
  };
}
