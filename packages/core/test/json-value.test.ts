import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import { CairnError } from '@cairn/core';
import { serializeJson, toErrorRecord, toJsonRoundTrip } from '@cairn/core/backend';

function assertNotSerializable(value: unknown, pathPattern?: RegExp): void {
  assert.throws(
    () => toJsonRoundTrip(value, { what: 'test value' }),
    (err: unknown) => {
      assert.ok(CairnError.is(err, 'NOT_SERIALIZABLE'), `expected NOT_SERIALIZABLE, got ${String(err)}`);
      assert.match(err.message, /^test value is not JSON-serialisable/);
      if (pathPattern) assert.match(err.message, pathPattern);
      return true;
    },
  );
}

describe('toJsonRoundTrip', () => {
  it('returns a deep copy, the JSON text and its UTF-8 byte length', () => {
    const input = { a: [1, 'two', true, null], b: { c: 'é€😀' } };
    const result = toJsonRoundTrip(input);
    assert.deepEqual(result.value, input);
    assert.notEqual(result.value, input);
    assert.equal(result.text, JSON.stringify(input));
    // é is 2 bytes, € 3, 😀 4: the byte length is not the string length.
    assert.equal(result.bytes, result.text.length - 4 + 2 + 3 + 4);
    assert.equal(result.bytes, new TextEncoder().encode(result.text).length);
  });

  it('passes falsy top-level values through', () => {
    for (const value of [null, 0, false, '', -0]) {
      assert.equal(toJsonRoundTrip(value).value, JSON.parse(JSON.stringify(value)));
    }
  });

  it('leaves undefined properties out and turns undefined array items and holes into null, as JSON.stringify does', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the input under test
    const input = { id: 7, note: undefined, tags: ['a', undefined, , 'b'], nested: { only: undefined } };
    const result = toJsonRoundTrip(input);
    assert.deepStrictEqual(result.value, { id: 7, tags: ['a', null, null, 'b'], nested: {} });
    assert.equal(result.text, JSON.stringify(input));
    assert.ok('note' in input && 'only' in input.nested, 'the input keeps its properties');
  });

  it('refuses a Date, naming the path and how to carry it', () => {
    assertNotSerializable(
      { order: { placedAt: new Date(0) } },
      /a Date is not a JSON value \(pass date\.toISOString\(\) or date\.getTime\(\).*\) at test\.order\.placedAt$/,
    );
    assertNotSerializable(new Date(0), /a Date .* at test$/);
    assertNotSerializable([runInNewContext('new Date(0)')], /a Date .* at test\[0\]$/);
  });

  it('accepts shared (non-circular) references, null-prototype objects and plain objects of another realm', () => {
    const shared = { x: 1 };
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { y: 2 });
    const foreign = runInNewContext('({ list: [1, { z: 3 }] })') as unknown;
    assert.deepEqual(toJsonRoundTrip({ a: shared, b: [shared], bare, foreign }).value, {
      a: { x: 1 },
      b: [{ x: 1 }],
      bare: { y: 2 },
      foreign: { list: [1, { z: 3 }] },
    });
  });

  it('refuses class instances, boxed primitives and objects with a toJSON method', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    assertNotSerializable(
      { p: new Point(1, 2) },
      /a Point is not a JSON value \(only plain objects and arrays are carried: copy its data into one\) at test\.p$/,
    );
    assertNotSerializable({ n: Object(1) }, /a Number is not a JSON value .* at test\.n$/);
    assertNotSerializable({ b: Buffer.from('x') }, /a Buffer is not a JSON value \(pass buffer\.toString\('base64'\)\) at test\.b$/);
    assertNotSerializable({ o: { toJSON: () => 1 } }, /a toJSON method is not JSON data at test\.o\.toJSON$/);
    assertNotSerializable([{ toJSON: () => undefined }], /a toJSON method is not JSON data at test\[0\]\.toJSON$/);
  });

  it('refuses functions, undefined as the whole value, bigint, symbols and non-finite numbers, naming the path', () => {
    assertNotSerializable(() => 1, /at test$/);
    assertNotSerializable(undefined, /undefined is not a JSON value at test$/);
    assertNotSerializable([1, () => 1], /a function is not a JSON value at test\[1\]$/);
    assertNotSerializable({ n: 10n }, /a bigint is not a JSON value at test\.n$/);
    assertNotSerializable({ s: Symbol('x') }, /symbol/);
    assertNotSerializable({ [Symbol('k')]: 1 }, /symbol-keyed/);
    assertNotSerializable({ 'odd key': [NaN] }, /NaN is not a JSON number at test\["odd key"\]\[0\]$/);
    assertNotSerializable({ big: Infinity }, /Infinity/);
    assertNotSerializable({ big: -Infinity }, /-Infinity/);
    assertNotSerializable({ fn() {} }, /function is not a JSON value at test\.fn$/);
  });

  it('names the root of the path from what, or from root, and adds the note', () => {
    assert.throws(
      () => toJsonRoundTrip({ items: [0, 1, 2, { price: 1n }] }, { what: 'output of step "x"', note: 'the body ran' }),
      (err: unknown) => CairnError.is(err, 'NOT_SERIALIZABLE') && /at output\.items\[3\]\.price; the body ran$/.test(err.message),
    );
    assert.throws(
      () => toJsonRoundTrip({ a: 1n }, { what: 'my "thing"', root: 'thing' }),
      (err: unknown) => CairnError.is(err, 'NOT_SERIALIZABLE') && (err.data as { path: string }).path === 'thing.a',
    );
    assert.throws(
      () => toJsonRoundTrip({ a: 1n }, { what: '"quoted" value' }),
      (err: unknown) => CairnError.is(err, 'NOT_SERIALIZABLE') && (err.data as { path: string }).path === '$.a',
    );
  });

  it('refuses cycles, naming where the object comes back', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    assertNotSerializable(a, /a circular reference at test\.self$/);
    const list: unknown[] = [];
    list.push({ list });
    assertNotSerializable(list, /a circular reference at test\[0\]\.list$/);
  });

  it('refuses built-ins JSON would flatten to {}', () => {
    assertNotSerializable({ m: new Map([[1, 2]]) }, /Map/);
    assertNotSerializable(new Set([1]), /Set/);
    assertNotSerializable({ e: new Error('boom') }, /Error/);
    assertNotSerializable({ r: /x/ }, /RegExp/);
    assertNotSerializable({ u: new Uint8Array(2) }, /Uint8Array/);
    assertNotSerializable({ p: Promise.resolve(1) }, /Promise/);
  });

  it('wraps a throwing toJSON', () => {
    const bad = {
      toJSON() {
        throw new Error('nope');
      },
    };
    assert.throws(
      () => toJsonRoundTrip({ bad }),
      (err: unknown) => CairnError.is(err, 'NOT_SERIALIZABLE') && (err.cause as Error).message === 'nope',
    );
  });

  it('enforces maxBytes with PAYLOAD_TOO_LARGE carrying the sizes', () => {
    assert.equal(serializeJson('ab', { maxBytes: 4 }).bytes, 4);
    assert.throws(
      () => serializeJson('€€', { maxBytes: 7, what: 'step output' }),
      (err: unknown) => {
        assert.ok(CairnError.is(err, 'PAYLOAD_TOO_LARGE'));
        assert.deepEqual(err.data, { bytes: 8, maxBytes: 7 });
        assert.match(err.message, /^step output is 8 bytes/);
        return true;
      },
    );
  });

  it('does not mutate its input', () => {
    const input = { gone: undefined, list: [1, undefined] };
    toJsonRoundTrip(input);
    assert.ok('gone' in input);
    assert.deepStrictEqual(input.list, [1, undefined]);
  });
});

describe('toErrorRecord: the data of a CairnError', () => {
  it('follows the payload rule', () => {
    const record = toErrorRecord(new CairnError('INVALID_INPUT', 'declined', { data: { reason: 'card', detail: undefined, codes: [undefined] } as never }));
    assert.deepStrictEqual(record.data, { reason: 'card', codes: [null] });
  });

  it('records the refusal of data JSON cannot carry, with the error as its cause', () => {
    const record = toErrorRecord(new CairnError('INVALID_INPUT', 'declined', { data: { amount: 10n } as never }));
    assert.equal(record.code, 'NOT_SERIALIZABLE');
    assert.match(record.message, /^data of error INVALID_INPUT is not JSON-serialisable: a bigint is not a JSON value at data\.amount$/);
    assert.deepStrictEqual(record.data, { path: 'data.amount' });
    assert.equal(record.cause?.code, 'INVALID_INPUT');
    assert.equal(record.cause?.message, 'declined');
    assert.equal(record.cause?.data, undefined);
  });
});
