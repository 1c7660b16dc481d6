import type { Clock } from '../clock/clock.js';
import { CairnError } from '../errors/cairn-error.js';
import { checkIdentifier, checkOptions, IDENTIFIER_LIMITS, invalidInput } from '../engine/check-input.js';
import { uuidv7 } from '../engine/uuid.js';
import type { ScheduleRecord } from '../model/schedule.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import { cronTicks } from './cron-ticks.js';
import { checkScheduleOptions, type ScheduleDefinition, type ScheduleOptions } from './define-schedule.js';
import { dueAtOf, type createScheduleRunner } from './schedule-runner.js';

/**
 * `engine.schedules`: schedules created, changed and fired at run time. Every method checks its
 * arguments first (`INVALID_INPUT`, nothing written); a name that no schedule has is
 * `SCHEDULE_NOT_FOUND`.
 */
export interface EngineSchedules {
  /**
   * Creates a schedule; its first tick is the first one after now. `INVALID_INPUT` for a bad cron
   * expression, time zone, policy or input (a function input is for `defineSchedule` only) or a
   * workflow this engine does not register; `SCHEDULE_EXISTS` when the name is taken.
   */
  create<I>(options: ScheduleOptions<I>): Promise<ScheduleRecord>;
  /** One schedule, or `undefined`. */
  get(name: string): Promise<ScheduleRecord | undefined>;
  /** Schedules by name, at most `limit` (default 100, at most 1000), after `after` when given. */
  list(options?: { limit?: number; after?: string }): Promise<ScheduleRecord[]>;
  /** Stops new ticks (ticks already decided still start their runs). Idempotent. */
  pause(name: string): Promise<ScheduleRecord>;
  /** Starts ticking again from the first tick after now: ticks of the paused time are not caught up. Idempotent. */
  resume(name: string): Promise<ScheduleRecord>;
  /**
   * Starts one run now, whatever the overlap policy and even when paused, with the idempotency key
   * `schedule:<name>:trigger:<uuid>`. The firing is recorded first (so it is never lost): an engine
   * that registers the workflow (and, for a computed input, declares the schedule) starts the run
   * at once and returns its id; any other (a CLI) returns only the key, and the next schedule pass
   * of an engine that can starts it.
   */
  trigger(name: string): Promise<{ key: string; runId?: string }>;
  /** Deletes the schedule (not its runs). A schedule declared in code is created again by the next engine started with it. */
  delete(name: string): Promise<boolean>;
  /** One schedule pass now (the recovery loop runs one when a schedule is due): fires due ticks. Returns the runs started. */
  tick(): Promise<number>;
}

/** What `engine.schedules` needs of its engine. */
export interface EngineSchedulesDeps {
  store: WorkflowStore;
  clock: Clock;
  runner: ReturnType<typeof createScheduleRunner>;
  /** Whether this engine registers the workflow. */
  runs(workflow: string): boolean;
  /** Whether this engine declared the schedule with a computed input. */
  computes(name: string): boolean;
  maxPayloadBytes: number;
}

/** A new record for `def` at `now`. Throws `INVALID_INPUT` when its expression never ticks again. */
export function newScheduleRecord(def: ScheduleDefinition, source: 'code' | 'api', now: number): ScheduleRecord {
  const next = cronTicks(`schedule ${JSON.stringify(def.name)}`, def.cron, def.timezone).next(now);
  if (next === undefined) throw invalidInput(`schedule ${JSON.stringify(def.name)} cron`, 'has no tick after now', def.cron);
  const record: ScheduleRecord = {
    name: def.name,
    workflow: def.workflow,
    cron: def.cron,
    timezone: def.timezone,
    input: def.input,
    computedInput: def.computeInput !== undefined,
    overlap: def.overlap,
    catchUp: def.catchUp,
    catchUpLimit: def.catchUpLimit,
    source,
    paused: def.paused,
    nextTickAt: next,
    dueAt: null,
    firing: [],
    bufferedTickAt: null,
    lastRunId: null,
    lastTickAt: null,
    skippedTicks: 0,
    lastSkippedTickAt: null,
    revision: 1,
    createdAt: now,
    updatedAt: now,
  };
  return { ...record, dueAt: dueAtOf(record, now) };
}

const sameDefinition = (s: ScheduleRecord, def: ScheduleDefinition): boolean =>
  s.workflow === def.workflow &&
  s.cron === def.cron &&
  s.timezone === def.timezone &&
  s.computedInput === (def.computeInput !== undefined) &&
  JSON.stringify(s.input) === JSON.stringify(def.input) &&
  s.overlap === def.overlap &&
  s.catchUp === def.catchUp &&
  s.catchUpLimit === def.catchUpLimit &&
  s.source === 'code';

/**
 * Makes the store hold `def` (declared in code): creates it when absent; when its definition
 * differs, rewrites the definition (a changed expression or zone restarts from the first tick
 * after now), keeping its state and whether it is paused.
 */
export async function declareSchedule(store: WorkflowStore, def: ScheduleDefinition, now: number): Promise<void> {
  for (;;) {
    const { schedule: s, created } = await store.schedules.create(newScheduleRecord(def, 'code', now));
    if (created || sameDefinition(s, def)) return;
    const retimed = s.cron !== def.cron || s.timezone !== def.timezone;
    const fresh = newScheduleRecord(def, 'code', now);
    const next = {
      ...s,
      workflow: def.workflow,
      cron: def.cron,
      timezone: def.timezone,
      input: def.input,
      computedInput: fresh.computedInput,
      overlap: def.overlap,
      catchUp: def.catchUp,
      catchUpLimit: def.catchUpLimit,
      source: 'code' as const,
      updatedAt: now,
      ...(retimed ? { nextTickAt: fresh.nextTickAt } : {}),
    };
    if (await store.schedules.update({ ...next, dueAt: dueAtOf(next, now) }, s.revision)) return;
  }
}

/** Builds `engine.schedules`. */
export function createEngineSchedules(deps: EngineSchedulesDeps): EngineSchedules {
  const { store, clock } = deps;
  const checkName = (what: string, name: unknown): string => checkIdentifier(what, name, IDENTIFIER_LIMITS.scheduleName);
  const notFound = (name: string) => new CairnError('SCHEDULE_NOT_FOUND', `Schedule ${JSON.stringify(name)} not found`, { data: { name } });

  /** Applies `change` by compare-and-set until it lands. */
  const modify = async (name: string, change: (s: ScheduleRecord, now: number) => ScheduleRecord): Promise<ScheduleRecord> => {
    for (;;) {
      const s = await store.schedules.get(name);
      if (!s) throw notFound(name);
      const now = clock.now();
      const next = change(s, now);
      const written = await store.schedules.update({ ...next, updatedAt: now }, s.revision);
      if (written) return written;
    }
  };

  return {
    async create(options) {
      const def = checkScheduleOptions('schedules.create', options, false, deps.maxPayloadBytes);
      if (!deps.runs(def.workflow)) throw invalidInput('schedules.create workflow', 'is not a workflow this engine registers', def.workflow);
      const { schedule, created } = await store.schedules.create(newScheduleRecord(def, 'api', clock.now()));
      if (!created) throw new CairnError('SCHEDULE_EXISTS', `Schedule ${JSON.stringify(def.name)} already exists`, { data: { name: def.name } });
      deps.runner.lookBy(schedule.dueAt);
      return schedule;
    },
    async get(name) {
      return store.schedules.get(checkName('schedules.get name', name));
    },
    async list(rawOptions) {
      const options = checkOptions('schedules.list options', rawOptions, ['limit', 'after']);
      const limit = options.limit ?? 100;
      if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
        throw invalidInput('schedules.list limit', 'must be an integer from 1 to 1000', limit);
      const after = options.after === undefined ? undefined : checkName('schedules.list after', options.after);
      return store.schedules.list(after === undefined ? { limit } : { limit, after });
    },
    async pause(rawName) {
      const name = checkName('schedules.pause name', rawName);
      return modify(name, (s, now) => {
        const next = { ...s, paused: true };
        return { ...next, dueAt: dueAtOf(next, now) };
      });
    },
    async resume(rawName) {
      const name = checkName('schedules.resume name', rawName);
      const resumed = await modify(name, (s, now) => {
        if (!s.paused) return s;
        const tick = cronTicks(`schedule ${JSON.stringify(s.name)}`, s.cron, s.timezone).next(now);
        const next = { ...s, paused: false, nextTickAt: tick ?? s.nextTickAt };
        return { ...next, dueAt: dueAtOf(next, now, tick !== undefined) };
      });
      deps.runner.lookBy(resumed.dueAt);
      return resumed;
    },
    async trigger(rawName) {
      const name = checkName('schedules.trigger name', rawName);
      const key = `schedule:${name}:trigger:${uuidv7()}`;
      const written = await modify(name, (s, now) => ({ ...s, firing: [...s.firing, { tickAt: now, key }], dueAt: now }));
      // An engine without the workflow (or the code computing its input), such as the CLI's, only
      // records the firing: the next schedule pass of an engine that has them starts the run.
      if (!deps.runs(written.workflow) || (written.computedInput && !deps.computes(name))) {
        deps.runner.lookBy(written.dueAt);
        return { key };
      }
      // Started here, or found by its key when a racing engine started the same firing first.
      const runId = (await deps.runner.handle(written)).get(key);
      return runId === undefined ? { key } : { key, runId };
    },
    async delete(rawName) {
      return store.schedules.delete(checkName('schedules.delete name', rawName));
    },
    tick: () => deps.runner.pass(),
  };
}
