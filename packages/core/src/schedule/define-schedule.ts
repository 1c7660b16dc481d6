import { CairnError } from '../errors/cairn-error.js';
import { checkIdentifier, checkOptions, checkOptionalBoolean, IDENTIFIER_LIMITS, invalidInput } from '../engine/check-input.js';
import type { WorkflowDefinition } from '../engine/define/define-workflow.js';
import type { Json } from '../model/json.js';
import type { ScheduleCatchUp, ScheduleOverlap } from '../model/schedule.js';
import { toJsonRoundTrip } from '../serialization/json-value.js';
import { cronTicks } from './cron-ticks.js';

/** The most missed ticks `catchUp: 'all'` may start in one pass. */
export const MAX_CATCH_UP_LIMIT = 1000;

/** Options of a schedule (`defineSchedule`, `createEngine({ schedules })`, `engine.schedules.create`). */
export interface ScheduleOptions<I = unknown> {
  /** The schedule's name, unique per store: an identifier of at most 200 characters. */
  name: string;
  /** The workflow each tick starts (a definition or its name); the engine must register it. */
  workflow: WorkflowDefinition<I, unknown> | string;
  /** A cron expression (5 fields, or 6 with seconds first), as croner reads it. */
  cron: string;
  /** The IANA time zone the expression is read in. Default `UTC`. */
  timezone?: string;
  /**
   * The input of every run: a JSON value, or (declared in code only) a function of the tick's time
   * computing it — called by the engine that starts the tick's run.
   */
  input?: I | ((tick: Date) => I);
  /** While the previous run is active: `skip` the tick (default), `allow` it, or `buffer-one` (keep one pending). */
  overlap?: ScheduleOverlap;
  /** Missed ticks after a downtime: `none`, `latest` (default) or `all` (up to `catchUpLimit`). */
  catchUp?: ScheduleCatchUp;
  /** With `catchUp: 'all'`: the most missed ticks started, the latest ones (1 to 1000, default 10). */
  catchUpLimit?: number;
  /** Created paused (`engine.schedules.resume` starts it). Default false. */
  paused?: boolean;
}

/** A checked schedule: what `defineSchedule` returns. */
export interface ScheduleDefinition {
  readonly name: string;
  readonly workflow: string;
  readonly cron: string;
  readonly timezone: string;
  /** The fixed input (`null` when computed). */
  readonly input: Json;
  /** Computes a tick's input, when the schedule was given a function. */
  readonly computeInput?: (tick: Date) => unknown;
  readonly overlap: ScheduleOverlap;
  readonly catchUp: ScheduleCatchUp;
  readonly catchUpLimit: number;
  readonly paused: boolean;
}

const OVERLAPS: readonly string[] = ['skip', 'allow', 'buffer-one'];
const CATCH_UPS: readonly string[] = ['none', 'latest', 'all'];
const OPTION_NAMES = ['name', 'workflow', 'cron', 'timezone', 'input', 'overlap', 'catchUp', 'catchUpLimit', 'paused'];

/**
 * Checks a schedule's options and returns its definition; throws `INVALID_INPUT` naming the
 * option (an unparseable cron expression, an unknown time zone, an unknown policy, a bad name, a
 * non-JSON input, or a function input where `allowComputed` is false). Writes nothing.
 */
export function checkScheduleOptions(what: string, raw: unknown, allowComputed: boolean, maxPayloadBytes?: number): ScheduleDefinition {
  if (raw === undefined) throw invalidInput(what, 'must be an object', raw);
  const options = checkOptions(what, raw, OPTION_NAMES) as Partial<ScheduleOptions>;
  const name = checkIdentifier(`${what} name`, options.name, IDENTIFIER_LIMITS.scheduleName);
  const workflowName = typeof options.workflow === 'object' && options.workflow !== null ? (options.workflow as WorkflowDefinition).name : options.workflow;
  const workflow = checkIdentifier(`${what} workflow`, workflowName, IDENTIFIER_LIMITS.workflowName);
  const timezone = options.timezone ?? 'UTC';
  const cron = options.cron as string;
  cronTicks(what, cron, timezone);
  const overlap = options.overlap ?? 'skip';
  if (!OVERLAPS.includes(overlap)) throw invalidInput(`${what} overlap`, `must be one of ${OVERLAPS.join(', ')}`, overlap);
  const catchUp = options.catchUp ?? 'latest';
  if (!CATCH_UPS.includes(catchUp)) throw invalidInput(`${what} catchUp`, `must be one of ${CATCH_UPS.join(', ')}`, catchUp);
  const catchUpLimit = options.catchUpLimit ?? 10;
  if (typeof catchUpLimit !== 'number' || !Number.isSafeInteger(catchUpLimit) || catchUpLimit < 1 || catchUpLimit > MAX_CATCH_UP_LIMIT) {
    throw invalidInput(`${what} catchUpLimit`, `must be an integer from 1 to ${MAX_CATCH_UP_LIMIT}`, catchUpLimit);
  }
  const paused = checkOptionalBoolean(`${what} paused`, options.paused) ?? false;
  const base = { name, workflow, cron, timezone, overlap: overlap as ScheduleOverlap, catchUp: catchUp as ScheduleCatchUp, catchUpLimit, paused };
  if (typeof options.input === 'function') {
    if (!allowComputed) throw invalidInput(`${what} input`, 'must be a JSON value (a computed input is declared in code, with defineSchedule)', options.input);
    return Object.freeze({ ...base, input: null, computeInput: options.input as (tick: Date) => unknown });
  }
  try {
    const input = toJsonRoundTrip(options.input ?? null, {
      what: `${what} input`,
      root: 'input',
      ...(maxPayloadBytes === undefined ? {} : { maxBytes: maxPayloadBytes }),
    }).value;
    return Object.freeze({ ...base, input });
  } catch (error) {
    if (error instanceof CairnError) throw invalidInput(`${what} input`, error.message, options.input);
    throw error;
  }
}

/**
 * Declares a schedule in code, for `createEngine({ schedules: [...] })`: every engine given it
 * creates it in the store if absent, and brings its definition up to date if it changed (keeping
 * whether it is paused). Throws `INVALID_INPUT` as `checkScheduleOptions`.
 */
export function defineSchedule<I>(options: ScheduleOptions<I>): ScheduleDefinition {
  return checkScheduleOptions('defineSchedule', options, true);
}
