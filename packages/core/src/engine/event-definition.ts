import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';
import { checkIdentifier, IDENTIFIER_LIMITS, invalidInput } from './check-input.js';

/**
 * A runtime check of an event's payload: any object with a `parse(value): T` method that returns
 * the value (possibly transformed) or throws. A zod schema is one; Cairn depends on none.
 */
export interface EventSchema<T> {
  parse(value: unknown): T;
}

const EVENT = Symbol.for('cairn.event');

/**
 * An event shared by the code that sends it and the workflow that waits for it, so both agree on
 * its name and payload type: `engine.sendEvent(runId, approval, payload)` takes a `T`, and
 * `ctx.waitForEvent(approval)` resolves with one.
 */
export interface EventDefinition<T extends Json = Json> {
  readonly [EVENT]: true;
  /** The event name (checked like every event name, see `checkEventName`). */
  readonly name: string;
  /**
   * Applied by `engine.sendEvent` before anything is stored: a payload it throws on is refused with
   * `INVALID_INPUT`, and what it returns is what is stored and what the wait receives. Never
   * applied when the wait receives the message (the stored value is already checked, and a replay
   * must see what the first execution saw even if the schema changed since).
   */
  readonly schema?: EventSchema<T>;
}

/** Options of `defineEvent`. */
export interface DefineEventOptions<T> {
  /** Checks (and may transform) each payload on send; see `EventDefinition.schema`. */
  schema?: EventSchema<T>;
}

/**
 * Checks an event name, the same for `engine.sendEvent`, `ctx.waitForEvent` and `defineEvent`: an
 * identifier (`checkIdentifier`) of at most `IDENTIFIER_LIMITS.eventName` characters (494: the
 * wait's step key `event:<name>` must fit the 500 of a step name) that does not end like a
 * generated key (`#` and digits, or `:compensate`). Throws `INVALID_INPUT` naming `what`; returns
 * the name.
 */
export function checkEventName(what: string, value: unknown): string {
  const name = checkIdentifier(what, value, IDENTIFIER_LIMITS.eventName);
  if (/#\d+$/.test(name) || name.endsWith(':compensate')) {
    throw invalidInput(what, 'is reserved: it ends like a generated key ("#" and digits, or ":compensate")', name);
  }
  return name;
}

/**
 * Defines an event: its name (checked at once, `INVALID_INPUT` when a wait would refuse it) and,
 * optionally, a runtime `schema` applied on send.
 */
export function defineEvent<T extends Json = Json>(name: string, options: DefineEventOptions<T> = {}): EventDefinition<T> {
  const checked = checkEventName('defineEvent name', name);
  const schema = options?.schema;
  if (schema !== undefined && (typeof schema !== 'object' || schema === null || typeof schema.parse !== 'function')) {
    throw new CairnError('INVALID_INPUT', `defineEvent(${JSON.stringify(checked)}): schema must be an object with a parse(value) method`);
  }
  return Object.freeze(schema === undefined ? { [EVENT]: true as const, name: checked } : { [EVENT]: true as const, name: checked, schema });
}

/** Whether `value` was made by `defineEvent`. */
export function isEventDefinition(value: unknown): value is EventDefinition {
  return typeof value === 'object' && value !== null && (value as { [EVENT]?: unknown })[EVENT] === true;
}

/** The name of an event given by name or definition (anything else is returned for the name check to refuse). */
export function eventNameOf(event: unknown): unknown {
  return isEventDefinition(event) ? event.name : event;
}
