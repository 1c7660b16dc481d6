import type { ErrorRecord, Json } from '@cairn/core';

/**
 * Payloads (inputs, outputs, errors, state values, event payloads, descriptors) are stored as
 * JSON text, not as BSON sub-documents. That keeps them exact whatever they contain — object keys
 * with `.`, `$` or the empty string, which BSON updates refuse; numbers beyond 2^53 as the engine
 * wrote them; lone surrogates, which `JSON.stringify` escapes — and it keeps their stored size
 * equal to the size the engine measured against `maxPayloadBytes` (BSON arrays of numbers are up
 * to eight times larger than their JSON). The price: payloads are not queryable inside MongoDB.
 */
export function encodeJson(value: Json): string {
  return JSON.stringify(value);
}

/** Reverses `encodeJson`. */
export function decodeJson(text: string): Json {
  return JSON.parse(text) as Json;
}

/** Encodes an error record (its `data` is arbitrary JSON, so it gets the same treatment). */
export function encodeError(error: ErrorRecord): string {
  return JSON.stringify(error);
}

/** Reverses `encodeError`. */
export function decodeError(text: string): ErrorRecord {
  return JSON.parse(text) as ErrorRecord;
}
