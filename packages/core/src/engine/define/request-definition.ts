import type { Json } from '../../model/json.js';
import type { JsonGate } from '../../serialization/json-types.js';
import type { StandardSchemaV1 } from '../../validation/standard-schema.js';
import { IDENTIFIER_LIMITS } from '../check-input.js';
import { type EventSchema, REQUEST_EVENT_PREFIX, checkDefinitionSchema, checkMessageName } from './event-definition.js';

const REQUEST = Symbol.for('cairn.request');

/**
 * The longest request name: the request travels as the event `$request:<name>`, whose wait's step
 * key `event:$request:<name>` must fit a step name.
 */
export const MAX_REQUEST_NAME = IDENTIFIER_LIMITS.eventName - REQUEST_EVENT_PREFIX.length;

/**
 * A request shared by the code that sends it (`engine.request`) and the workflow that answers it
 * (`ctx.receiveRequest`), so both agree on its name, its payload type `T` (`In` before the schema)
 * and its reply type `R`.
 */
export interface RequestDefinition<T = Json, R = Json, In = T> {
  readonly [REQUEST]: true;
  /** The request name (checked by `checkRequestName`). */
  readonly name: string;
  /**
   * Applied by `engine.request` before anything is stored, exactly as an event's schema is by
   * `sendEvent`: a payload it refuses is `INVALID_INPUT`, its value is what is stored and received.
   */
  readonly schema?: StandardSchemaV1<In, T> | EventSchema<T>;
  /** Type only: the reply the workflow gives. */
  readonly reply?: R;
}

/** Options of `defineRequest`. */
export interface DefineRequestOptions<T, In = T> {
  /** Checks (and may transform) each payload on `engine.request`; see `RequestDefinition.schema`. */
  schema?: StandardSchemaV1<In, T> | EventSchema<T>;
}

/**
 * Checks a request name, the same for `engine.request`, `ctx.receiveRequest` and `defineRequest`: a
 * message name (`checkMessageName`: an identifier not ending like a generated key) of at most
 * `MAX_REQUEST_NAME` characters. Throws `INVALID_INPUT` naming `what`; returns the name.
 */
export function checkRequestName(what: string, value: unknown): string {
  return checkMessageName(what, value, MAX_REQUEST_NAME);
}

/**
 * Defines a request: its name (checked at once) and, optionally, a runtime `schema` applied on
 * `engine.request` (a Standard Schema, or an object with a `parse(value)` method). The payload type
 * is the schema's output or `T`; the reply type is `R` (`defineRequest<{ street: string },
 * { ok: boolean }>('change-address')`).
 */
export function defineRequest<T = Json, R = Json, In = T>(
  name: string & JsonGate<T, 'request payload'> & JsonGate<R, 'request reply'>,
  options: DefineRequestOptions<T, In> = {},
): RequestDefinition<T, R, In> {
  const checked = checkRequestName('defineRequest name', name);
  const schema = checkDefinitionSchema(`defineRequest(${JSON.stringify(checked)})`, options?.schema);
  return Object.freeze(schema === undefined ? { [REQUEST]: true as const, name: checked } : { [REQUEST]: true as const, name: checked, schema });
}

/** Whether `value` was made by `defineRequest`. */
export function isRequestDefinition(value: unknown): value is RequestDefinition {
  return typeof value === 'object' && value !== null && (value as { [REQUEST]?: unknown })[REQUEST] === true;
}

/** The name of a request given by name or definition (anything else is returned for the name check to refuse). */
export function requestNameOf(request: unknown): unknown {
  return isRequestDefinition(request) ? request.name : request;
}
