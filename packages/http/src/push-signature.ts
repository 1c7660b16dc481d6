// The signature of a push: HMAC-SHA256 over `<timestamp>.<body>` with a shared secret, sent in two
// headers. Several secrets may be valid at once (rotation): a sender signs with each secret it
// holds, a receiver accepts a request that one of its secrets signed. Comparisons take the same
// time whatever the bytes (`timingSafeEqual`), and every secret is tried, so the time a refusal
// takes says nothing about how close a forged signature came.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries the sender's clock (milliseconds since the epoch, decimal). */
export const TIMESTAMP_HEADER = 'cairn-timestamp';
/** The header that carries the signatures: `v1=<hex>`, comma-separated when several secrets sign. */
export const SIGNATURE_HEADER = 'cairn-signature';

const SCHEME = 'v1=';
// A SHA-256 HMAC in hex.
const SIGNATURE_HEX_LENGTH = 64;
// More signatures than any rotation needs: a header with more is refused unread.
const MAX_SIGNATURES = 8;

function hmac(secret: string, timestamp: string, body: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(timestamp).update('.').update(body).digest();
}

/**
 * The headers that sign `body` at `timestamp` (default: now) with each of `secrets` (at least one):
 * `cairn-timestamp` and `cairn-signature`. The body must be sent byte for byte as signed.
 */
export function signPush(body: string | Uint8Array, secrets: string | readonly string[], timestamp: number = Date.now()): Record<string, string> {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (list.length === 0) throw new TypeError('signPush: at least one secret is needed');
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const stamp = String(Math.trunc(timestamp));
  return {
    [TIMESTAMP_HEADER]: stamp,
    [SIGNATURE_HEADER]: list.map((secret) => `${SCHEME}${hmac(secret, stamp, bytes).toString('hex')}`).join(','),
  };
}

/** Why a signature check refused a request. */
export type SignatureRefusal = 'missing-signature' | 'bad-timestamp' | 'stale-timestamp' | 'bad-signature';

/**
 * Checks a push's headers against `body`: the timestamp is a decimal within `toleranceMs` of `now`
 * (either side), and one of the signatures is the HMAC of one of `secrets`. Returns the refusal, or
 * undefined when the push is authentic. Runs in time independent of which secret or signature
 * matched, or how much of a wrong one did.
 */
export function verifyPush(
  headers: { get(name: string): string | null },
  body: Uint8Array,
  secrets: readonly string[],
  toleranceMs: number,
  now: number,
): SignatureRefusal | undefined {
  const timestamp = headers.get(TIMESTAMP_HEADER);
  const header = headers.get(SIGNATURE_HEADER);
  if (timestamp === null || header === null) return 'missing-signature';
  if (!/^[0-9]{1,16}$/.test(timestamp)) return 'bad-timestamp';
  if (Math.abs(now - Number(timestamp)) > toleranceMs) return 'stale-timestamp';
  const given = header.split(',', MAX_SIGNATURES + 1).map((part) => part.trim());
  if (given.length > MAX_SIGNATURES) return 'bad-signature';
  const candidates = given.filter((part) => part.startsWith(SCHEME) && part.length === SCHEME.length + SIGNATURE_HEX_LENGTH);
  if (candidates.length === 0) return 'bad-signature';
  let matched = false;
  for (const secret of secrets) {
    const expected = hmac(secret, timestamp, body);
    for (const candidate of candidates) {
      const bytes = Buffer.from(candidate.slice(SCHEME.length), 'hex');
      // Malformed hex decodes short: compared against itself, so the time stays the same, and refused.
      const same = bytes.length === expected.length ? timingSafeEqual(bytes, expected) : timingSafeEqual(expected, expected) && false;
      matched = same || matched;
    }
  }
  return matched ? undefined : 'bad-signature';
}
