import { CairnError, type Json } from '@cairn/core';
import { serializeJson } from '@cairn/core/backend';

/**
 * What a Cairn job stores in pg-boss's `data` column. The payload travels as JSON text rather
 * than as the jsonb value itself: jsonb reorders object keys and refuses `\u0000` in strings, and
 * the contract promises the payload exactly as a JSON round trip leaves it.
 */
export interface JobEnvelope {
  /** Format version, so a later adapter can read jobs queued by this one. */
  v: 1;
  /** The payload's JSON text. */
  json: string;
}

/** Serialises `payload` (refusing non-JSON with `NOT_SERIALIZABLE`) into an envelope. */
export function encodeEnvelope(payload: Json, queue: string): JobEnvelope {
  const { text } = serializeJson(payload, { what: `payload of a job for queue "${queue}"` });
  return { v: 1, json: text };
}

/** Reads the payload back; throws `INVALID_INPUT` for data this adapter did not write. */
export function decodeEnvelope(data: unknown, jobId: string): Json {
  const envelope = data as Partial<JobEnvelope> | null;
  if (envelope === null || typeof envelope !== 'object' || envelope.v !== 1 || typeof envelope.json !== 'string') {
    throw new CairnError('INVALID_INPUT', `pg-boss job ${jobId} was not sent by @cairn/queue-pg-boss (no Cairn envelope in its data)`);
  }
  return JSON.parse(envelope.json) as Json;
}
