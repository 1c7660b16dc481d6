/**
 * A deep copy of a stored record or payload, as `structuredClone` makes it, faster for what the
 * memory store holds: plain objects and arrays of primitives are copied property by property
 * (own enumerable string keys, `undefined` values kept), and anything else — a `Date`, a `Map`, a
 * class instance — is handed to `structuredClone`. `structuredClone` of a step record was a
 * tenth of an inline step's CPU on the memory store (docs/benchmarks.md).
 *
 * Guarantee: the copy shares no object with `value`, so mutating either never changes the other.
 * Records and payloads hold no cycles (payloads are JSON); a cyclic plain object is not supported.
 */
export function copyRecord<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyRecord(value[i] as unknown);
    return out as T;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = copyRecord((value as Record<string, unknown>)[key]);
  return out as T;
}
