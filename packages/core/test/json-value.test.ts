import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError } from '@cairn/core';
import { serializeJson, toJsonRoundTrip } from '@cairn/core/backend';

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

  it('serialises values with toJSON through it: a Date becomes its ISO string', () => {
    const at = new Date('2025-03-04T05:06:07.089Z');
    assert.deepEqual(toJsonRoundTrip({ at }).value, { at: '2025-03-04T05:06:07.089Z' });
  });

  it('accepts shared (non-circular) references and class instances with data', () => {
    const shared = { x: 1 };
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    assert.deepEqual(toJsonRoundTrip({ a: shared, b: [shared], p: new Point(1, 2) }).value, {
      a: { x: 1 },
      b: [{ x: 1 }],
      p: { x: 1, y: 2 },
    });
  });

  it('refuses functions, undefined, bigint, symbols and non-finite numbers, naming the path', () => {
    assertNotSerializable(() => 1, /at \$$/);
    assertNotSerializable(undefined, /undefined/);
    assertNotSerializable({ a: { b: undefined } }, /at \$\.a\.b$/);
    assertNotSerializable([1, undefined], /at \$\[1\]$/);
    // A hole in an array would silently become null.
    // biome-ignore lint/suspicious/noSparseArray: the hole is the input under test
    assertNotSerializable([1, , 3], /at \$\[1\]$/);
    assertNotSerializable({ n: 10n }, /a bigint is not a JSON value at \$\.n$/);
    assertNotSerializable({ s: Symbol('x') }, /symbol/);
    assertNotSerializable({ [Symbol('k')]: 1 }, /symbol-keyed/);
    assertNotSerializable({ 'odd key': [NaN] }, /NaN is not a JSON number at \$\["odd key"\]\[0\]$/);
    assertNotSerializable({ big: Infinity }, /Infinity/);
    assertNotSerializable({ big: -Infinity }, /-Infinity/);
    assertNotSerializable({ fn() {} }, /function is not a JSON value at \$\.fn$/);
  });

  it('refuses cycles', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    assertNotSerializable(a, /circular/);
    const list: unknown[] = [];
    list.push({ list });
    assertNotSerializable(list, /circular/);
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
    const input = { when: new Date(0), list: [1, 2] };
    toJsonRoundTrip(input);
    assert.ok(input.when instanceof Date);
    assert.deepEqual(input.list, [1, 2]);
  });
});
