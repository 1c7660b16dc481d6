import { CairnError } from '../../errors/cairn-error.js';
import type { Json } from '../../model/json.js';
import type { JsonGate } from '../../serialization/json-types.js';
import type { StandardSchemaV1 } from '../../validation/standard-schema.js';
import { isStandardSchema } from '../../validation/validate-payload.js';
import { checkIdentifier, IDENTIFIER_LIMITS, invalidInput } from '../check-input.js';

/**
 * A runtime check of an event's payload, the form `defineEvent` took before Standard Schema: any
 * object with a `parse(value): T` method that returns the value (possibly transformed) or throws.
 * Still accepted; a schema that also implements Standard Schema (zod 3.24+) is applied through
 * Standard Schema.
 */
export interface EventSchema<T> {
  parse(value: unknown): T;
}

const EVENT = Symbol.for('cairn.event');

/**
 * An event shared by the code that sends it and the workflow that waits for it, so both agree on
 * its name and payload type: `engine.sendEvent(runId, approval, payload)` takes an `In` (a `T`
 * unless a schema transforms), and `ctx.waitForEvent(approval)` resolves with a `T` after the JSON
 * round trip (`Jsonify<T>`).
 */
export interface EventDefinition<T = Json, In = T> {
  readonly [EVENT]: true;
  /** The event name (checked like every event name, see `checkEventName`). */
  readonly name: string;
  /**
   * Applied by `engine.sendEvent` before anything is stored: a Standard Schema (zod, valibot,
   * ArkType, ...; async ones too) or a `parse` method. A payload it refuses is refused with
   * `INVALID_INPUT` (a Standard Schema's issues in `data.issues`), and its value is what is stored
   * and what the wait receives. Never applied when the wait receives the message (the stored value
   * is already checked, and a replay must see what the first execution saw even if the schema
   * changed since).
   */
  readonly schema?: StandardSchemaV1<In, T> | EventSchema<T>;
}

/** Options of `defineEvent`. */
export interface DefineEventOptions<T, In = T> {
  /** Checks (and may transform) each payload on send; see `EventDefinition.schema`. */
  schema?: StandardSchemaV1<In, T> | EventSchema<T>;
}

/**
 * Checks an event name, the same for `engine.sendEvent`, `ctx.waitForEvent` and `defineEvent`: an
 * identifier (`checkIdentifier`) of at most `IDENTIFIER_LIMITS.eventName` characters (494: the
 * wait's step key `event:<name>` must fit the 500 of a step name) that does not end like a
 * generated key (`#` and digits, or `:compensate`) and does not start with `REQUEST_EVENT_PREFIX`. Throws
 * `INVALID_INPUT` naming `what`; returns the name.
 */
export function checkEventName(what: string, value: unknown): string {
  const name = checkMessageName(what, value, IDENTIFIER_LIMITS.eventName);
  if (name.startsWith(REQUEST_EVENT_PREFIX)) {
    throw invalidInput(what, `is reserved: names starting with ${JSON.stringify(REQUEST_EVENT_PREFIX)} carry requests (engine.request)`, name);
  }
  return name;
}

/**
 * The prefix of the event names that carry requests (`engine.request` sends request `name` as a
 * message of the event `$request:<name>`): `checkEventName` refuses it, so no event can pose as a
 * request.
 */
export const REQUEST_EVENT_PREFIX = '$request:';

/**
 * The rules every message name follows (an event's, a request's): an identifier of at most
 * `maxLength` characters that does not end like a generated key (`#` and digits, or `:compensate`).
 */
export function checkMessageName(what: string, value: unknown, maxLength: number): string {
  const name = checkIdentifier(what, value, maxLength);
  if (/#\d+$/.test(name) || name.endsWith(':compensate')) {
    throw invalidInput(what, 'is reserved: it ends like a generated key ("#" and digits, or ":compensate")', name);
  }
  return name;
}

/**
 * Defines an event: its name (checked at once, `INVALID_INPUT` when a wait would refuse it) and,
 * optionally, a runtime `schema` applied on send — a Standard Schema, or an object with a
 * `parse(value)` method. The payload type is the schema's output (`defineEvent('paid', { schema:
 * z.object({ amount: z.number() }) })`), or `T` given as a type argument; a payload type JSON cannot
 * carry (a `Date`, a `Map`, a class instance with methods) is a compile error.
 */
export function defineEvent<T = Json, In = T>(name: string & JsonGate<T, 'event payload'>, options: DefineEventOptions<T, In> = {}): EventDefinition<T, In> {
  const checked = checkEventName('defineEvent name', name);
  const schema = checkDefinitionSchema(`defineEvent(${JSON.stringify(checked)})`, options?.schema);
  return Object.freeze(schema === undefined ? { [EVENT]: true as const, name: checked } : { [EVENT]: true as const, name: checked, schema });
}

/**
 * Checks the `schema` option of a message definition (`defineEvent`, `defineRequest`): absent, a
 * Standard Schema, or an object with a `parse(value)` method. Throws `INVALID_INPUT` naming `what`.
 */
export function checkDefinitionSchema<S>(what: string, schema: S): S {
  if (
    schema !== undefined &&
    !isStandardSchema(schema) &&
    (typeof schema !== 'object' || schema === null || typeof (schema as { parse?: unknown }).parse !== 'function')
  ) {
    throw new CairnError(
      'INVALID_INPUT',
      `${what}: schema must be a Standard Schema (a "~standard" property, version 1) or an object with a parse(value) method`,
    );
  }
  return schema;
}

/** Whether `value` was made by `defineEvent`. */
export function isEventDefinition(value: unknown): value is EventDefinition {
  return typeof value === 'object' && value !== null && (value as { [EVENT]?: unknown })[EVENT] === true;
}

/** The name of an event given by name or definition (anything else is returned for the name check to refuse). */
export function eventNameOf(event: unknown): unknown {
  return isEventDefinition(event) ? event.name : event;
}
