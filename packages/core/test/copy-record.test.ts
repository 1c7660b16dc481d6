import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copyRecord } from '../src/store/copy-record.js';

describe('copyRecord and keys named __proto__', () => {
  it('keeps an own property named __proto__ as an own property, at any depth and whatever its value', () => {
    const value = JSON.parse('{"__proto__":{"admin":true},"a":{"__proto__":null,"b":{"__proto__":7}},"list":[{"__proto__":[1,2]}]}') as Record<string, unknown>;
    const copy = copyRecord(value);
    assert.deepStrictEqual(copy, value);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype, 'the prototype of the copy is not the value of its __proto__ key');
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(copy, '__proto__'), {
      value: { admin: true },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    const a = copy.a as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(a), Object.prototype, 'a __proto__ of null does not make a null-prototype object');
    assert.ok(Object.hasOwn(a, '__proto__') && Object.getOwnPropertyDescriptor(a, '__proto__')?.value === null);
    assert.ok(Object.hasOwn(a.b as object, '__proto__'), 'a number under __proto__ is kept, not ignored');
    const item = (copy.list as object[])[0] as object;
    assert.equal(Object.getPrototypeOf(item), Object.prototype);
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(item, '__proto__')?.value, [1, 2]);
    assert.notEqual(
      Object.getOwnPropertyDescriptor(copy, '__proto__')?.value,
      Object.getOwnPropertyDescriptor(value, '__proto__')?.value,
      'deep: the value under __proto__ is copied too',
    );
    assert.equal(({} as Record<string, unknown>).admin, undefined, 'Object.prototype is untouched');
  });

  it('gives JSON.stringify of the copy the same text as the original', () => {
    const text = '{"__proto__":{"x":1},"y":[{"__proto__":"s"}]}';
    assert.equal(JSON.stringify(copyRecord(JSON.parse(text))), text);
  });
});
