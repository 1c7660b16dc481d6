import type { EventDelivery } from '../../model/event.js';
import type { Json } from '../../model/json.js';
import { checkIdentifier, checkOptions, checkRunId, IDENTIFIER_LIMITS, invalidInput } from '../check-input.js';
import { isReserved } from '../flow/start-chain.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { checkEventName, eventNameOf, isEventDefinition } from '../define/event-definition.js';
import { applyMessageSchema } from './apply-message-schema.js';

/** Options of `engine.sendEvent`. */
export interface SendEventOptions {
  /**
   * Makes the send idempotent per run: a later send to the same run with the same key stores
   * nothing and answers `{ delivered: false, duplicate: true, seq }` (the message the first one
   * stored). An identifier of at most `IDENTIFIER_LIMITS.idempotencyKey` characters.
   */
  idempotencyKey?: string;
}

/**
 * `engine.sendEvent`: checks every argument before the store is touched (run id, event name by
 * the rule waits use, options, then the payload: the event's schema first, if it has one — a
 * Standard Schema, awaited, or a `parse` method; no payload is `null` to it — then the JSON and
 * size rules), appends the message and wakes the run in one store write, and dispatches the run
 * when the message was stored.
 */
export async function sendEvent(
  rt: EngineRuntime,
  checkPayload: (value: unknown, what: string) => Json,
  rawRunId: unknown,
  rawEvent: unknown,
  payload: unknown,
  rawOptions: unknown,
): Promise<EventDelivery> {
  const runId = checkRunId('sendEvent runId', rawRunId);
  const name = checkEventName('sendEvent event name', eventNameOf(rawEvent));
  const options = checkOptions('sendEvent options', rawOptions, ['idempotencyKey']) as SendEventOptions;
  const idempotencyKey =
    options.idempotencyKey === undefined ? undefined : checkIdentifier('sendEvent idempotencyKey', options.idempotencyKey, IDENTIFIER_LIMITS.idempotencyKey);
  // Debounce and batch runs collect their inputs as events under names and keys of their own.
  if (isReserved(name)) throw invalidInput('sendEvent event name', 'must not start with U+0001 (Cairn keeps those names for debounce and batch runs)', name);
  if (idempotencyKey !== undefined && isReserved(idempotencyKey)) {
    throw invalidInput('sendEvent idempotencyKey', 'must not start with U+0001 (Cairn keeps those keys for debounce and batch runs)', idempotencyKey);
  }
  const schema = isEventDefinition(rawEvent) ? rawEvent.schema : undefined;
  const value = await applyMessageSchema(schema, payload, `event ${JSON.stringify(name)}`, { argument: 'payload', event: name });
  const json = checkPayload(value === undefined ? null : value, `payload of event ${JSON.stringify(name)}`);
  const now = rt.clock.now();
  const result =
    idempotencyKey === undefined
      ? await rt.store.events.deliver(runId, name, json, now)
      : await rt.store.events.deliver(runId, name, json, now, { idempotencyKey });
  if (result.delivered) {
    const run = await rt.store.runs.get(runId);
    if (run) await rt.dispatchRun(run);
  }
  return result;
}
