import { CairnError } from '../../errors/cairn-error.js';
import type { Json } from '../../model/json.js';
import { isStandardSchema, validatePayload } from '../../validation/validate-payload.js';
import type { StandardSchemaV1 } from '../../validation/standard-schema.js';
import type { EventSchema } from '../define/event-definition.js';

/**
 * Applies the schema of an event or request definition to a payload on its way in (`sendEvent`,
 * `request`): a Standard Schema, awaited, or a `parse` method. No payload is `null` to it. A refused
 * payload throws `INVALID_INPUT` naming `what` (`event "paid"`), with `data` (and, for a Standard
 * Schema, the issues); nothing is read or written. Returns the (possibly transformed) value.
 */
export async function applyMessageSchema(
  schema: StandardSchemaV1 | EventSchema<unknown> | undefined,
  payload: unknown,
  what: string,
  data: Record<string, Json>,
): Promise<unknown> {
  const value: unknown = payload === undefined ? null : payload;
  if (isStandardSchema(schema)) return validatePayload(schema, value, { code: 'INVALID_INPUT', what: `payload of ${what}`, root: 'payload', data });
  if (schema === undefined) return value;
  try {
    return schema.parse(value);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CairnError('INVALID_INPUT', `payload of ${what} does not match its schema: ${reason}`, { cause: error, data });
  }
}
