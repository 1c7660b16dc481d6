import type { Json } from '../../model/json.js';
import { toJsonRoundTrip } from '../../serialization/json-value.js';

/**
 * A step's output as it is recorded and handed to the workflow: its JSON round trip (undefined
 * properties left out, undefined array items null). A value JSON cannot carry, or one over
 * `maxBytes`, is refused with a message saying that the body already ran and that the step is not
 * retried: no attempt can make the same value serialisable, so the caller fails the step at once.
 */
export function stepOutputJson(value: unknown, key: string, maxBytes: number): Json {
  return toJsonRoundTrip(value, {
    what: `output of step ${JSON.stringify(key)}`,
    root: 'output',
    note: "the step's body already ran (its effects happened), and the step is not retried: return only JSON data from a step (see Payloads in docs/semantics.md)",
    maxBytes,
  }).value;
}
