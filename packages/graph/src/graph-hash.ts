// The fingerprint of a graph: a hash of its canonical JSON (keys sorted), so the same graph written
// with its keys in another order has the same fingerprint, and any change to what it does has
// another one.
import { createHash } from 'node:crypto';
import type { Json } from '@cairn/core';

/** JSON with object keys sorted at every level. */
export function canonicalJson(value: Json): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as { [key: string]: Json })[k] as Json)}`).join(',')}}`;
}

/** The first 16 hex digits of the SHA-256 of the graph's canonical JSON. */
export function graphHash(spec: Json): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex').slice(0, 16);
}
