/**
 * A deep copy of a stored record or payload, as `structuredClone` makes it, faster for what the
 * memory store holds: plain objects and arrays of primitives are copied property by property
 * (own enumerable string keys, `undefined` values kept), and anything else — a `Date`, a `Map`, a
 * class instance — is handed to `structuredClone`. `structuredClone` of a step record was a
 * tenth of an inline step's CPU on the memory store (docs/benchmarks.md).
 *
 * An own property named `__proto__` (what `JSON.parse('{"__proto__": 1}')` makes) is copied as an
 * own property, like any other key: assigning it would call the `Object.prototype.__proto__`
 * setter instead, which changes the copy's prototype (an object value), makes it a null-prototype
 * object (`null`) or drops the key (anything else). Every copied object has `Object.prototype`,
 * as `JSON.parse` gives (a null-prototype object is copied into an ordinary one).
 *
 * Guarantee: the copy shares no object with `value`, so mutating either never changes the other,
 * and it has the same own keys and values: `JSON.stringify` gives the same text for both.
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
  for (const key of Object.keys(value)) {
    const item = copyRecord((value as Record<string, unknown>)[key]);
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out as T;
}
