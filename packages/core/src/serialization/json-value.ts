import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';

/** Options of `serializeJson` and `toJsonRoundTrip`. */
export interface SerializeJsonOptions {
  /** Names the value in error messages, e.g. `'job payload'` or `'output of step "charge"'`. */
  what?: string;
  /**
   * Names the value at the start of a refusal's path (`output.items[3].price`). Default: the first
   * word of `what` (`output` for `'output of step "charge"'`, `state` for `'state "cart"'`), or `$`
   * when that word is not an identifier.
   */
  root?: string;
  /** Added to the message of a refusal (`NOT_SERIALIZABLE`, `PAYLOAD_TOO_LARGE`) after a `;`: what the refusal means for the caller. */
  note?: string;
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

type Segment = string | number;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

// How to carry the data of a built-in JSON cannot carry, by constructor name.
const HINTS: Readonly<Record<string, string>> = {
  Date: 'pass date.toISOString() or date.getTime() and build the Date again where it is read',
  Map: 'pass Object.fromEntries(map) or [...map]',
  Set: 'pass [...set]',
  Buffer: "pass buffer.toString('base64')",
  Uint8Array: "pass Buffer.from(bytes).toString('base64')",
};

/** `root` followed by `path` as JavaScript would write it: `output.items[3].price`, `input["a b"]`. */
export function describePath(root: string, path: readonly Segment[]): string {
  let out = root;
  for (const key of path) {
    out += typeof key === 'number' ? `[${key}]` : IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }
  return out;
}

/** True for what JSON carries as it is: arrays and plain objects (prototype `Object.prototype` of any realm, or `null`). */
function isPlain(obj: object): boolean {
  if (Array.isArray(obj)) return true;
  const proto: unknown = Object.getPrototypeOf(obj);
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
}

/** Why a non-plain object is refused: `a Date is not a JSON value (pass ...)`. */
function notPlainReason(obj: object): string {
  let name: unknown;
  try {
    name = (Object.getPrototypeOf(obj) as { constructor?: { name?: unknown } }).constructor?.name;
  } catch {
    // A hostile prototype: described without its name.
  }
  const hint = obj instanceof Date ? HINTS.Date : typeof name === 'string' ? HINTS[name] : undefined;
  const what = typeof name === 'string' && IDENTIFIER.test(name) ? `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}` : 'an object with a prototype';
  return `${what} is not a JSON value (${hint ?? 'only plain objects and arrays are carried: copy its data into one'})`;
}

function rootOf(what: string): string {
  const first = what.split(' ', 1)[0] as string;
  return IDENTIFIER.test(first) ? first : '$';
}

/**
 * Serialises `value` to JSON text with `JSON.stringify`'s rules, refusing what JSON cannot carry.
 *
 * As `JSON.stringify`: an `undefined` object property is left out, an `undefined` array item (or a
 * hole) becomes `null`, `-0` becomes `0`. Refused with `CairnError('NOT_SERIALIZABLE')`, its
 * message and `data.path` naming where (`output.items[3].price`): `undefined` as the whole value,
 * functions, symbols (as values or keys), bigints, `NaN`/`±Infinity`, cycles, and every object
 * but arrays and plain objects: `Date`, `Map`, `Set`, typed arrays and `Buffer`, boxed
 * primitives, class instances, and objects with a `toJSON` method (JSON would carry what
 * `toJSON` returns, not the object). Throws `CairnError('PAYLOAD_TOO_LARGE')` when
 * `options.maxBytes` is exceeded. Never mutates `value`.
 *
 * Guarantee: returns only when `JSON.parse(text)` reads back what `JSON.parse(JSON.stringify(value))`
 * does, and that is the data `value` holds.
 */
export function serializeJson(value: unknown, options: SerializeJsonOptions = {}): SerializedJson {
  const what = options.what ?? 'value';
  const root = options.root ?? rootOf(what);
  const note = options.note === undefined ? '' : `; ${options.note}`;
  // The containers being serialised, outermost first, with the key each sits under. JSON.stringify
  // goes depth first and calls the replacer with the holder of each key, so everything above that
  // holder is finished: popping down to it keeps the path to the current key, and an object already
  // open is a cycle. Nothing is allocated for leaves, keeping the happy path cheap.
  const open: object[] = [];
  const segments: Segment[] = [];
  const openSet = new Set<object>();
  let failure: CairnError | undefined;

  function replacer(this: unknown, key: string, current: unknown): unknown {
    const holder = this as object;
    while (open.length > 0 && open[open.length - 1] !== holder) {
      openSet.delete(open.pop() as object);
      segments.pop();
    }
    const topLevel = open.length === 0;
    const segment: Segment = Array.isArray(holder) ? Number(key) : key;
    const fail = (reason: string, below: Segment[] = []): never => {
      const at = describePath(root, topLevel ? below : [...segments.slice(1), segment, ...below]);
      failure = new CairnError('NOT_SERIALIZABLE', `${what} is not JSON-serialisable: ${reason} at ${at}${note}`, { data: { path: at } });
      // Thrown to abort JSON.stringify at once; caught below and replaced by `failure`.
      throw failure;
    };
    // JSON.stringify has already replaced an object with a toJSON method by what that returns.
    if (current !== (holder as Record<string, unknown>)[key]) {
      const raw = (holder as Record<string, unknown>)[key];
      if (typeof raw === 'object' && raw !== null && typeof (raw as { toJSON?: unknown }).toJSON === 'function') {
        return isPlain(raw) ? fail('a toJSON method is not JSON data', ['toJSON']) : fail(notPlainReason(raw));
      }
    }
    switch (typeof current) {
      case 'string':
      case 'boolean':
        return current;
      case 'number':
        return Number.isFinite(current) ? current : fail(`${String(current)} is not a JSON number`);
      case 'undefined':
        // Left out of an object, null in an array: what JSON.stringify does. Nothing at all is not JSON.
        return topLevel ? fail('undefined is not a JSON value') : undefined;
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
    if (!isPlain(obj)) return fail(notPlainReason(obj));
    if (openSet.has(obj)) return fail('a circular reference');
    if (!Array.isArray(obj)) {
      if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') return fail('a toJSON method is not JSON data', ['toJSON']);
      if (Object.getOwnPropertySymbols(obj).some((s) => Object.prototype.propertyIsEnumerable.call(obj, s))) return fail('a symbol-keyed property is not JSON');
    }
    open.push(obj);
    openSet.add(obj);
    segments.push(segment);
    return obj;
  }

  let text: string | undefined;
  try {
    text = JSON.stringify(value, replacer);
  } catch (err) {
    if (failure !== undefined && err === failure) throw failure;
    // JSON.stringify's own failures: a throwing toJSON or getter, or nesting deep enough to
    // exhaust the stack (RangeError).
    const reason = err instanceof RangeError ? 'nested too deeply' : 'serialisation failed';
    throw new CairnError('NOT_SERIALIZABLE', `${what} is not JSON-serialisable: ${reason}${note}`, { cause: err });
  }
  // Unreachable with the replacer above (it refuses every input that yields undefined), kept so the
  // type is narrowed honestly rather than asserted.
  if (text === undefined)
    throw new CairnError('NOT_SERIALIZABLE', `${what} is not JSON-serialisable: no JSON representation at ${root}${note}`, { data: { path: root } });
  const bytes = Buffer.byteLength(text, 'utf8');
  if (options.maxBytes !== undefined && bytes > options.maxBytes) {
    throw new CairnError('PAYLOAD_TOO_LARGE', `${what} is ${bytes} bytes of JSON; the limit is ${options.maxBytes}${note}`, {
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
