import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeKey, encodeKey } from '../src/key-codec.js';
import { HOSTILE_KEYS, isWellFormed } from './support/hostile-keys.js';

describe('key codec', () => {
  it('round-trips every hostile key exactly', () => {
    for (const key of HOSTILE_KEYS) assert.equal(decodeKey(encodeKey(key)), key, JSON.stringify(key));
  });

  it('produces field names that MongoDB and FerretDB accept on an update path', () => {
    for (const key of HOSTILE_KEYS) {
      const field = encodeKey(key);
      assert.ok(field.length > 0);
      assert.ok(!field.includes('.'), field);
      assert.ok(!field.startsWith('$'), field);
      assert.ok(!field.includes('\u0000'), field);
      assert.equal(field.trim(), field, 'no surrounding whitespace');
      assert.ok(!/^\d/.test(field), 'never looks like an array index');
      assert.ok(isWellFormed(field), 'no lone surrogates');
    }
  });

  it('is injective (different keys never share a field)', () => {
    const fields = new Set(HOSTILE_KEYS.map(encodeKey));
    assert.equal(fields.size, new Set(HOSTILE_KEYS).size);
  });

  it('keeps ordinary step keys readable', () => {
    assert.equal(encodeKey('charge'), 'kcharge');
    assert.equal(encodeKey('charge#2'), 'kcharge#2');
    assert.equal(encodeKey('send-email_1'), 'ksend-email_1');
    assert.equal(encodeKey('ünï'), 'künï');
    assert.equal(encodeKey('a.b'), 'ka%002Eb');
  });

  it('round-trips random strings of arbitrary UTF-16 code units', () => {
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 2000; n++) {
      const length = next() % 20;
      let key = '';
      for (let i = 0; i < length; i++) key += String.fromCharCode(next() % 3 === 0 ? next() % 128 : next() % 0x10000);
      assert.equal(decodeKey(encodeKey(key)), key);
    }
  });

  it('refuses to decode a field it did not make', () => {
    assert.throws(() => decodeKey('plain'), TypeError);
  });
});
