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

/**
 * The fixed-length key column of a stored string: the SHA-256 (hex) of its stored form. Keys of any
 * length (state keys, step keys, event names) are matched through it, since MySQL cannot index a
 * long VARCHAR in utf8mb4; the full key lives next to it in a TEXT column.
 */
export function keyHash(stored: string): string {
  // The one-shot `hash` (Node 20.12+): a Hash object per call was a visible share of a step write's CPU.
  return hash('sha256', stored, 'hex');
}
