import type { Json } from '@cairn/core';

/**
 * JSON is stored as TEXT, serialised here. SQL NULL means "no value" (`undefined`); JSON `null`
 * is the text `null`; falsy values (`0`, `false`, `''`) keep their own texts.
 */
export function encodeJson(value: Json | undefined): string | null {
  if (value === undefined) return null;
  return JSON.stringify(value);
}

/** A required JSON column (never SQL NULL). */
export function encodeJsonRequired(value: Json): string {
  return JSON.stringify(value ?? null);
}

/** Reverses `encodeJson`: SQL NULL is `undefined`. */
export function decodeJson<T = Json>(stored: unknown): T | undefined {
  if (stored === null || stored === undefined) return undefined;
  return JSON.parse(toText(stored)) as T;
}

/** Column values come back as strings, or as Buffers from some drivers for binary columns. */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return String(value);
}

/** BIGINT columns: strings from pg, numbers (or bigints) from the others. */
export function toNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** A nullable BIGINT column. */
export function toOptionalNumber(value: unknown): number | undefined {
  return value === null || value === undefined ? undefined : toNumber(value);
}
