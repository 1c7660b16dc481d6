import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';

/** The property that marks a stored value as encoded, holding the name of the codec that encoded it. */
export const ENCODED_MARK = 'cairn:codec';

/**
 * What a codec stores in place of a payload: a JSON object marked with `"cairn:codec"` (the
 * codec's name, e.g. `aes-256-gcm`), optionally the id of the key it was encoded with, and
 * whatever else the codec needs to decode it (`data`, an IV...). Every store keeps it as it keeps
 * any payload; the CLI and the dashboard recognise it by the mark and show `encoded (key k1)`.
 */
export interface PayloadEnvelope {
  readonly [ENCODED_MARK]: string;
  /** The id of the key the payload was encoded with, for codecs with keys. */
  readonly key?: string;
  readonly [field: string]: Json | undefined;
}

/** Which payload a codec is asked to encode or decode. */
export type PayloadKind = 'input' | 'output' | 'step output' | 'error data' | 'event payload' | 'state' | 'schedule input' | 'stream chunk';

/** Where a payload sits: passed to every `encode` and `decode`, for messages and for codecs that choose keys by it. */
export interface PayloadContext {
  readonly kind: PayloadKind;
  /** The run the payload belongs to (absent for a schedule's input). */
  readonly runId?: string;
  /** The step (`step output`, and `error data` of a step or attempt), the state key, the event name or the schedule name. */
  readonly name?: string;
}

/**
 * Turns payloads into what the store keeps, and back (`createEngine({ codec })`, docs/encryption.md).
 * The engine encodes every payload before the store sees it — workflow inputs and outputs, step
 * outputs, event payloads, state values, the `data` of recorded errors, schedule inputs — and decodes
 * every one it reads. Both may be async (a key service). Either may throw: the engine reports it as
 * `CODEC_ERROR` naming the run and the key, and writes nothing (encode) or reads nothing (decode).
 *
 * Contract: `decode(await encode(v, c), c)` gives back `v` (JSON-equal), in any process given the
 * same codec.
 */
export interface PayloadCodec {
  /**
   * Encodes one payload (already a JSON value: the engine's JSON round trip ran first). Absent: a
   * decode-only codec, which writes payloads as they are and reads envelopes — the first step of
   * rolling a codec out (every process able to read envelopes before any writes one), or the way
   * back.
   */
  encode?(value: Json, context: PayloadContext): Promise<PayloadEnvelope>;
  /** Decodes an envelope this codec (or an earlier configuration of it) produced. */
  decode(envelope: PayloadEnvelope, context: PayloadContext): Promise<Json>;
  /**
   * The largest payload, in bytes of JSON, whose envelope fits in `storeBytes` (the store's
   * `maxPayloadBytes`), so the engine refuses a larger one with `PAYLOAD_TOO_LARGE` before the
   * store does. Absent: the store's limit applies to the payload as it is.
   */
  maxPayloadBytes?(storeBytes: number): number;
}

/** True when `value` is an envelope a codec produced (an object carrying the `"cairn:codec"` mark). */
export function isPayloadEnvelope(value: unknown): value is PayloadEnvelope {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as Record<string, unknown>)[ENCODED_MARK] === 'string';
}

/**
 * How a payload reads where it cannot be decoded: `encoded (key k1)`, or `encoded (aes-256-gcm)` for
 * an envelope without a key id; `undefined` for a value that is not an envelope.
 */
export function describeEncoded(value: unknown): string | undefined {
  if (!isPayloadEnvelope(value)) return undefined;
  return typeof value.key === 'string' ? `encoded (key ${value.key})` : `encoded (${value[ENCODED_MARK]})`;
}

/** Where the payload is, for messages: `input of run r1`, `output of step "charge" of run r1`. */
export function describeContext(context: PayloadContext): string {
  const name = context.name === undefined ? '' : ` ${JSON.stringify(context.name)}`;
  const owner = context.runId === undefined ? '' : ` of run ${context.runId}`;
  switch (context.kind) {
    case 'step output':
      return `output of step${name}${owner}`;
    case 'state':
      return `state${name}${owner}`;
    case 'event payload':
      return `payload of event${name}${owner}`;
    case 'schedule input':
      return `input of schedule${name}`;
    case 'error data':
      return `error data${context.name === undefined ? '' : ` of step${name}`}${owner}`;
    default:
      return `${context.kind}${owner}`;
  }
}

/** A `CODEC_ERROR`: `operation` of the payload at `context` failed; `data` names the run, the payload and the key. */
export function codecError(
  operation: 'encode' | 'decode',
  context: PayloadContext,
  reason: string,
  details: { codec?: string; key?: string; cause?: unknown } = {},
): CairnError {
  const data: Record<string, Json> = { operation, kind: context.kind };
  if (context.runId !== undefined) data.runId = context.runId;
  if (context.name !== undefined) data.name = context.name;
  if (details.codec !== undefined) data.codec = details.codec;
  if (details.key !== undefined) data.key = details.key;
  const key = details.key === undefined ? '' : ` (key ${details.key})`;
  return new CairnError('CODEC_ERROR', `Cannot ${operation} the ${describeContext(context)}${key}: ${reason}`, {
    data,
    ...(details.cause === undefined ? {} : { cause: details.cause }),
  });
}
