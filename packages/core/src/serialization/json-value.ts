import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';

/** Options of `serializeJson` and `toJsonRoundTrip`. */
export interface SerializeJsonOptions {
  /** Names the value in error messages, e.g. `'job payload'` or `'output of step "charge"'`. */
  what?: string;
  /**
   * Largest accepted size of the serialised text, in UTF-8 bytes. A larger value is refused with
   * `CairnError('PAYLOAD_TOO_LARGE')` whose `data` carries `{ bytes, maxBytes }`.
   */
  maxBytes?: number;
}

/** A value serialised to JSON text. */
export interface SerializedJson {
  /** The JSON text, exactly what `JSON.stringify` produces. */
  text: string;
  /** The size of `text` in UTF-8 bytes (what a database column or a network frame holds). */
  bytes: number;
}

/** A value after a JSON round trip, with the text it went through. */
export interface JsonRoundTrip extends SerializedJson {
  /** `JSON.parse(text)`: what a remote process or a later replay reads back. */
  value: Json;
}

// Built-ins that JSON.stringify silently turns into `{}` (or an index-keyed object), losing their
// content. Values with a `toJSON` method (Date, Buffer) never reach this check: JSON.stringify calls
// `toJSON` before the replacer sees the value.
const LOSSY_OBJECTS: ReadonlyArray<abstract new (...args: never[]) => unknown> = [Map, Set, WeakMap, WeakSet, WeakRef, RegExp, Error, Promise, ArrayBuffer];

function describePath(path: readonly (string | number)[]): string {
  let out = '$';
  for (const key of path) {
    out += typeof key === 'number' ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }
  return out;
}

function notSerializable(what: string, path: readonly (string | number)[], reason: string, cause?: unknown): CairnError {
  const at = describePath(path);
  return new CairnError('NOT_SERIALIZABLE', `${what} is not JSON-serialisable: ${reason} at ${at}`, {
    cause,
    data: { path: at },
  });
}

/**
 * Serialises `value` to JSON text, refusing anything that would not survive the trip unchanged.
 *
 * Guarantee: returns only when `JSON.parse(text)` reads back the same data. Throws
 * `CairnError('NOT_SERIALIZABLE')` (with the offending path in the message and in `data.path`) for
 * functions, `undefined` (at the top level, in arrays, or as an object property), bigints, symbols
 * (as values or keys), `NaN`/`±Infinity`, cycles, and built-ins JSON would flatten to `{}` (`Map`,
 * `Set`, `RegExp`, `Error`, `Promise`, typed arrays, ...). Values with a `toJSON` method are
 * serialised through it, so a `Date` becomes its ISO string. Throws
 * `CairnError('PAYLOAD_TOO_LARGE')` when `options.maxBytes` is exceeded. Never mutates `value`.
 */
export function serializeJson(value: unknown, options: SerializeJsonOptions = {}): SerializedJson {
  const what = options.what ?? 'value';
  // The replacer only sees (holder, key). Each object visited records its own holder and key, so
  // the path of a failure can be rebuilt by walking up; nothing is allocated for leaves, keeping the
  // happy path cheap. The top-level wrapper JSON.stringify creates is never recorded, which ends
  // the walk.
  const parents = new Map<object, [holder: unknown, key: string]>();
  let failure: CairnError | undefined;

  function pathOf(holder: unknown, key: string): (string | number)[] {
    const path: (string | number)[] = [];
    let link: [unknown, string] | undefined = [holder, key];
    while (link !== undefined && parents.has(link[0] as object)) {
      path.push(Array.isArray(link[0]) ? Number(link[1]) : link[1]);
      link = parents.get(link[0] as object);
    }
    return path.reverse();
  }

  function replacer(this: unknown, key: string, current: unknown): unknown {
    const fail = (reason: string): never => {
      failure = notSerializable(what, pathOf(this, key), reason);
      // Thrown to abort JSON.stringify at once; caught below and replaced by `failure`.
      throw failure;
    };
    switch (typeof current) {
      case 'string':
      case 'boolean':
        return current;
      case 'number':
        return Number.isFinite(current) ? current : fail(`${String(current)} is not a JSON number`);
      case 'undefined':
        return fail('undefined is not a JSON value');
      case 'function':
        return fail('a function is not a JSON value');
      case 'bigint':
        return fail('a bigint is not a JSON value');
      case 'symbol':
        return fail('a symbol is not a JSON value');
      case 'object':
        break;
    }
    if (current === null) return null;
    const obj = current as object;
    if (obj instanceof Number) {
      return Number.isFinite(obj.valueOf()) ? obj : fail(`${String(obj.valueOf())} is not a JSON number`);
    }
    if (obj instanceof String || obj instanceof Boolean) return obj;
    if (ArrayBuffer.isView(obj)) return fail(`a ${obj.constructor.name} is not a JSON value`);
    for (const ctor of LOSSY_OBJECTS) {
      if (obj instanceof ctor) return fail(`a ${obj.constructor.name} is not a JSON value (it would become {})`);
    }
    if (!Array.isArray(obj) && Object.getOwnPropertySymbols(obj).some((s) => Object.prototype.propertyIsEnumerable.call(obj, s))) {
      return fail('a symbol-keyed property is not JSON');
    }
    parents.set(obj, [this, key]);
    return obj;
  }

  let text: string | undefined;
  try {
    text = JSON.stringify(value, replacer);
  } catch (err) {
    if (failure !== undefined && err === failure) throw failure;
    // JSON.stringify's own failures: a cycle (TypeError), a throwing toJSON or getter, or nesting
    // deep enough to exhaust the stack (RangeError).
    const reason = err instanceof TypeError && /circular/i.test(err.message) ? 'a circular reference' : 'serialisation failed';
    throw new CairnError('NOT_SERIALIZABLE', `${what} is not JSON-serialisable: ${reason}`, { cause: err });
  }
  // Unreachable with the replacer above (it refuses every input that yields undefined), kept so the
  // type is narrowed honestly rather than asserted.
  if (text === undefined) throw notSerializable(what, [], 'no JSON representation');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (options.maxBytes !== undefined && bytes > options.maxBytes) {
    throw new CairnError('PAYLOAD_TOO_LARGE', `${what} is ${bytes} bytes of JSON; the limit is ${options.maxBytes}`, {
      data: { bytes, maxBytes: options.maxBytes },
    });
  }
  return { text, bytes };
}

/**
 * Sends `value` through `JSON.stringify` and `JSON.parse`, so the caller holds exactly what a remote
 * worker, a database row or a later replay would see.
 *
 * Guarantee: same refusals as `serializeJson` (`NOT_SERIALIZABLE`, `PAYLOAD_TOO_LARGE`); on success
 * `value` shares no object with the input, and `text`/`bytes` describe the serialised form.
 */
export function toJsonRoundTrip(value: unknown, options: SerializeJsonOptions = {}): JsonRoundTrip {
  const serialized = serializeJson(value, options);
  return { ...serialized, value: JSON.parse(serialized.text) as Json };
}
