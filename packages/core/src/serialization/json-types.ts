// The types of payloads: what a value of type T becomes after the JSON round trip every payload
// goes through (`Jsonify<T>`), and the compile-time refusal of what the round trip refuses at run
// time (`JsonChecked<T>`). The run-time rules are in json-value.ts (decision 53); these follow them.
import type { Json } from '../model/json.js';

/** What JSON carries as it is. */
type JsonPrimitive = string | number | boolean | null;

/**
 * Whether every payload type below takes `T` as it is: a type JSON already describes (`Json`, type
 * aliases of JSON values, `any`: it comes back as it went, its name kept), or `unknown` (checked at
 * run time only).
 */
type AsItIs<T> = [T] extends [Json] ? true : unknown extends T ? true : false;

/**
 * Why a type cannot be a payload, as the compiler shows it: `Type 'Date' is not assignable to type
 * '"a Date is not JSON: pass date.toISOString() ..."'`.
 */
type Refused<Why extends string> = `${Why} (see docs/semantics.md, Payloads)`;

/** The refusal of a non-plain object type, by what it is. */
type RefusedObject<T> = T extends Date
  ? Refused<'a Date is not JSON: pass date.toISOString() or date.getTime() and build the Date again where it is read'>
  : T extends ReadonlyMap<unknown, unknown>
    ? Refused<'a Map is not JSON: pass Object.fromEntries(map) or [...map]'>
    : T extends ReadonlySet<unknown>
      ? Refused<'a Set is not JSON: pass [...set]'>
      : T extends ArrayBuffer | ArrayBufferView | SharedArrayBuffer
        ? Refused<'binary data is not JSON: pass Buffer.from(bytes).toString("base64")'>
        : T extends RegExp
          ? Refused<'a RegExp is not JSON: pass regexp.source'>
          : T extends PromiseLike<unknown>
            ? Refused<'a Promise is not JSON: await it first'>
            : T extends WeakMap<object, unknown> | WeakSet<object>
              ? Refused<'a WeakMap or WeakSet is not JSON'>
              : // biome-ignore lint/complexity/noBannedTypes: the boxed types are what is refused here
                T extends String | Number | Boolean
                ? Refused<'a boxed primitive (new String(...)) is not JSON: pass the primitive'>
                : T extends { toJSON(...args: never[]): unknown }
                  ? Refused<'an object with a toJSON method is not JSON data: pass what toJSON returns'>
                  : never;

/**
 * `T` itself when every value of type `T` is a payload the JSON round trip carries (or leaves out:
 * `undefined`), else `T` with each part that is not replaced by a string type saying why. A `T`
 * not assignable to its `JsonChecked<T>` is refused at compile time (`JsonGate`), as the engine
 * would refuse it at run time with `NOT_SERIALIZABLE`, naming the property:
 *
 * - refused: `Date`, `Map`, `Set`, `RegExp`, `Promise`, typed arrays and buffers, boxed
 *   primitives, objects with a `toJSON` method, functions (so a class instance with methods, and
 *   any object with a method), `bigint`, `symbol`, symbol-keyed properties;
 * - accepted: strings, finite numbers (TypeScript cannot tell `NaN` apart: refused at run time),
 *   booleans, `null`, `undefined` (a property left out; an array item becomes `null`), arrays,
 *   tuples and readonly arrays, objects (interfaces and type aliases alike), `unknown` and `any`
 *   (checked at run time only).
 *
 * TypeScript types are structural: an `Error`, or a class instance whose public members are all
 * data, is to it an object like any other. Those pass here and are refused at run time (only plain
 * objects are carried), as are cycles and `NaN`.
 */
export type JsonChecked<T> = AsItIs<T> extends true ? T : CheckedMember<T>;

/** `JsonChecked` of each member of a union. */
type CheckedMember<T> = T extends JsonPrimitive | undefined
  ? T
  : T extends void
    ? T
    : T extends bigint
      ? Refused<'a bigint is not JSON: pass value.toString()'>
      : T extends symbol
        ? Refused<'a symbol is not JSON'>
        : T extends (...args: never[]) => unknown
          ? Refused<'a function is not JSON (a class instance with methods is not a plain object: copy its data into one)'>
          : [RefusedObject<T>] extends [never]
            ? T extends object
              ? { [K in keyof T]: K extends symbol ? Refused<'a symbol-keyed property is not JSON'> : JsonChecked<T[K]> }
              : T
            : RefusedObject<T>;

/** A JSON-carried value inside a container: `undefined` is what an array turns into `null`. */
type JsonifyItem<T> = T extends undefined ? null : T extends void ? null : Jsonify<T>;

/** The keys of `T` whose value may be `undefined` (optional, or typed `... | undefined`). */
type MaybeUndefinedKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/** An object type after the round trip: string keys only; a property that may be `undefined` is optional. */
type JsonifyObject<T> = {
  [K in keyof T as K extends symbol ? never : K extends MaybeUndefinedKeys<T> ? never : K]: Jsonify<T[K]>;
} & {
  [K in keyof T as K extends symbol ? never : K extends MaybeUndefinedKeys<T> ? K : never]?: Jsonify<Exclude<T[K], undefined>>;
};

/** One type from an intersection of object types, for readable hovers and messages. */
type Flatten<T> = { [K in keyof T]: T[K] } & {};

/** `Jsonify<T>` computed, for an object or array type. */
type JsonifyStructure<T> = T extends readonly unknown[] ? { [K in keyof T]: JsonifyItem<T[K]> } : Flatten<JsonifyObject<T>>;

/**
 * What a value of type `T` is after the JSON round trip every payload goes through (a step's
 * output, a workflow's output, an event payload, a state value, a child's output): a property that
 * may be `undefined` becomes optional (`{ note: string | undefined }` arrives as `{ note?: string }`:
 * the property is left out), an `undefined` array item becomes `null`, a symbol-keyed property is
 * gone. `undefined` as the whole value stays `undefined` (a step or workflow that returns nothing);
 * `void` becomes `undefined`. Object types are spelled out (an interface's name is not kept; the
 * type is the same shape), readonly arrays and tuples stay readonly arrays and tuples. `any` and
 * `unknown` stay what they are. Types `JsonChecked<T>` refuses have no faithful round trip: every
 * primitive taking them refuses them at compile time, so `Jsonify` never has to say what they become.
 */
export type Jsonify<T> = AsItIs<T> extends true ? T : JsonifyMember<T>;

/** `Jsonify` of each member of a union. */
type JsonifyMember<T> = T extends JsonPrimitive | undefined ? T : T extends void ? undefined : T extends object ? JsonifyStructure<T> : never;

/**
 * What a payload sent as `T` arrives as where `undefined` cannot stay `undefined` (a workflow's
 * input, an event payload, a child's input): `null` for `undefined`, `Jsonify<T>` otherwise.
 */
export type JsonifyPayload<T> = AsItIs<T> extends true ? T : JsonifyItem<T>;

/**
 * `unknown` (no constraint) when `T` is a payload JSON carries (see `JsonChecked`), else an object
 * type no argument has, whose one property spells out `JsonChecked<T>`: intersected with a
 * parameter's type, it refuses at compile time what the engine would refuse at run time, and the
 * compiler's message names each refused part and why. `Where` names the payload in that property.
 */
export type JsonGate<T, Where extends string = 'payload'> =
  AsItIs<T> extends true
    ? unknown
    : [T] extends [JsonChecked<T>]
      ? unknown
      : { readonly [K in `cairn: this ${Where} is not JSON, see each part refused`]: JsonChecked<T> };
