import { hash } from 'node:crypto';

// A marker no stored plain string starts with: strings that begin with it are stored encoded too.
const ENCODED = '\u0001';

/**
 * How a string is stored in a text column. Most strings are stored as they are; a string that
 * SQL text cannot hold exactly (a NUL character, which PostgreSQL refuses, or a lone surrogate,
 * which UTF-8 cannot encode) or that starts with the marker `\u0001` is stored as the marker
 * followed by its JSON form, which escapes both. The mapping is injective, so equality of stored
 * forms is equality of strings, and `decodeText` restores every string byte for byte.
 */
export function encodeText(value: string): string {
  if (!value.startsWith(ENCODED) && !value.includes('\u0000') && isWellFormed(value)) return value;
  return ENCODED + JSON.stringify(value);
}

// String.prototype.isWellFormed (Node 20+) is not in the ES2023 lib typings.
const isWellFormed = (value: string): boolean => (value as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Reverses `encodeText`. */
export function decodeText(stored: string): string {
  return stored.startsWith(ENCODED) ? (JSON.parse(stored.slice(1)) as string) : stored;
}

// Step keys, state keys and event names repeat across runs (every run of a workflow writes the
// same step keys), and a SHA-256 per write was a visible share of a PostgreSQL step's client CPU
// (issue 18): the hashes of recent short keys are kept. Bounded: emptied when full, and long keys
// are hashed every time, so the cache holds at most HASHED_KEYS × (MAX_CACHED_KEY + 64) characters.
const HASHED_KEYS = 4096;
const MAX_CACHED_KEY = 256;
const hashes = new Map<string, string>();

/**
 * The fixed-length key column of a stored string: the SHA-256 (hex) of its stored form. Keys of any
 * length (state keys, step keys, event names) are matched through it, since MySQL cannot index a
 * long VARCHAR in utf8mb4; the full key lives next to it in a TEXT column. A pure function of
 * `stored`: recent short keys are answered from a bounded cache.
 */
export function keyHash(stored: string): string {
  let hashed = hashes.get(stored);
  if (hashed !== undefined) return hashed;
  // The one-shot `hash` (Node 20.12+): a Hash object per call was a visible share of a step write's CPU.
  hashed = hash('sha256', stored, 'hex');
  if (stored.length <= MAX_CACHED_KEY) {
    if (hashes.size >= HASHED_KEYS) hashes.clear();
    hashes.set(stored, hashed);
  }
  return hashed;
}
