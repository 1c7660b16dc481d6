import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';
import { codecError, ENCODED_MARK, type PayloadCodec, type PayloadContext, type PayloadEnvelope } from './payload-codec.js';

/** The codec's name, in every envelope it writes. */
export const AES_GCM_CODEC = 'aes-256-gcm';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9._:-]{1,64}$/;
// Envelope bytes around the base64 of the ciphertext: the mark, the codec name, the key id (at
// most 64 characters), the property names and quotes.
const ENVELOPE_OVERHEAD = 160;
// IVs are drawn from the CSPRNG 256 at a time (one call instead of one per payload: a third of
// the cost of encrypting a small payload); each is used once.
const IV_BATCH = 256;
let ivPool = Buffer.alloc(0);
let ivOffset = 0;

/** A fresh random 96-bit IV. */
function nextIv(): Buffer {
  if (ivOffset + IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_BYTES * IV_BATCH);
    ivOffset = 0;
  }
  const iv = ivPool.subarray(ivOffset, ivOffset + IV_BYTES);
  ivOffset += IV_BYTES;
  return iv;
}

/** Options of `aesGcmCodec`. */
export interface AesGcmCodecOptions {
  /**
   * Every key the codec may decode with, by id: 32 bytes each, as a `Buffer`/`Uint8Array` or a
   * base64 string (`openssl rand -base64 32`). Ids are 1 to 64 characters of letters, digits and
   * `. _ : -`; each envelope names its key id, so keep a retired key here as long as payloads
   * encoded with it may be read.
   */
  keys: Readonly<Record<string, string | Uint8Array>>;
  /**
   * The id of the key new payloads are encoded with; one of `keys`. Absent: the codec only decodes
   * (payloads are written as they are), for rolling encryption out or back (docs/encryption.md).
   */
  current?: string;
}

/**
 * A payload codec that encrypts with AES-256-GCM (node:crypto): each payload's JSON text is
 * encrypted with the current key and a fresh random 96-bit IV, and stored as
 * `{ "cairn:codec": "aes-256-gcm", "key": "<id>", "data": "<base64 of IV, ciphertext, tag>" }`.
 * The codec name and key id are authenticated with it (additional data), so an envelope whose key
 * id was changed does not decode. Rotation: add the new key, make it `current`; payloads written
 * before still decode with the key their envelope names.
 *
 * Without `current` it only decodes: payloads are written as they are. Throws `INVALID_INPUT` for
 * no key, a key that is not 32 bytes, a bad key id, or a `current` not in `keys`. Decoding fails
 * with `CODEC_ERROR` (naming the run, the payload and the key id) when the envelope names a key
 * this codec does not have, or does not authenticate with the key it names (other key material,
 * altered data). See docs/encryption.md.
 */
export function aesGcmCodec(options: AesGcmCodecOptions): PayloadCodec {
  if (typeof options !== 'object' || options === null) throw new CairnError('INVALID_INPUT', 'aesGcmCodec: options must be an object');
  const keys = new Map<string, Buffer>();
  for (const [id, raw] of Object.entries(options.keys ?? {})) {
    if (!KEY_ID.test(id))
      throw new CairnError('INVALID_INPUT', `aesGcmCodec: key id ${JSON.stringify(id)} must be 1 to 64 letters, digits, '.', '_', ':' or '-'`);
    const key = typeof raw === 'string' ? Buffer.from(raw, 'base64') : raw instanceof Uint8Array ? Buffer.from(raw) : undefined;
    if (key?.length !== KEY_BYTES) {
      throw new CairnError(
        'INVALID_INPUT',
        `aesGcmCodec: key ${id} must be ${KEY_BYTES} bytes (a Buffer, or base64 text of 32 bytes), got ${key ? `${key.length} bytes` : typeof raw}`,
      );
    }
    keys.set(id, key);
  }
  if (keys.size === 0) throw new CairnError('INVALID_INPUT', 'aesGcmCodec: keys must hold at least one key');
  const current = options.current;
  const currentKey = typeof current === 'string' ? keys.get(current) : undefined;
  if (current !== undefined && currentKey === undefined) {
    throw new CairnError('INVALID_INPUT', `aesGcmCodec: current key ${JSON.stringify(current)} is not among the keys (${[...keys.keys()].join(', ')})`);
  }
  const additionalData = (id: string) => Buffer.from(`${AES_GCM_CODEC}:${id}`, 'utf8');

  const decoder: PayloadCodec = {
    async decode(envelope: PayloadEnvelope, context: PayloadContext): Promise<Json> {
      const id = envelope.key;
      const fail = (reason: string, cause?: unknown) =>
        codecError('decode', context, reason, { codec: envelope[ENCODED_MARK], ...(typeof id === 'string' ? { key: id } : {}), cause });
      if (envelope[ENCODED_MARK] !== AES_GCM_CODEC) throw fail(`it was encoded by codec ${JSON.stringify(envelope[ENCODED_MARK])}, not ${AES_GCM_CODEC}`);
      if (typeof id !== 'string') throw fail('the envelope names no key');
      const key = keys.get(id);
      if (key === undefined) throw fail(`key ${id} is not among this codec's keys (${[...keys.keys()].join(', ')})`);
      const sealed = typeof envelope.data === 'string' ? Buffer.from(envelope.data, 'base64') : undefined;
      if (sealed === undefined || sealed.length < IV_BYTES + TAG_BYTES) throw fail('the envelope holds no ciphertext');
      let text: string;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
        decipher.setAAD(additionalData(id));
        decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
        text = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch (error) {
        throw fail(`it does not authenticate with key ${id} (other key material under that id, or altered data)`, error);
      }
      return JSON.parse(text) as Json;
    },
  };
  if (current === undefined || currentKey === undefined) return decoder;
  return {
    ...decoder,
    async encode(value: Json, context: PayloadContext): Promise<PayloadEnvelope> {
      let text: string;
      try {
        text = JSON.stringify(value);
      } catch (error) {
        throw codecError('encode', context, 'the value is not JSON', { codec: AES_GCM_CODEC, key: current, cause: error });
      }
      const iv = nextIv();
      const cipher = createCipheriv('aes-256-gcm', currentKey, iv);
      cipher.setAAD(additionalData(current));
      const sealed = Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return { [ENCODED_MARK]: AES_GCM_CODEC, key: current, data: sealed.toString('base64') };
    },

    maxPayloadBytes(storeBytes: number): number {
      // base64 of IV + ciphertext (as long as the UTF-8 JSON text) + tag, inside the envelope.
      return Math.max(0, Math.floor(((storeBytes - ENVELOPE_OVERHEAD) / 4) * 3) - IV_BYTES - TAG_BYTES);
    },
  };
}
