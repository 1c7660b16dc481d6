import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { keyHash } from '../src/codec/text.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

describe('keyHash', () => {
  it('is the SHA-256 of the stored form, for new keys and for keys it has hashed before', () => {
    const keys = ['step-1', 'step-2', '', 'é', '\u0001"x"', 'k'.repeat(256), 'k'.repeat(257), 'x'.repeat(10_000)];
    for (let round = 0; round < 3; round++) for (const key of keys) assert.equal(keyHash(key), sha256(key), `${round}: ${key.slice(0, 20)}`);
  });

  it('stays exact past its bound, when the keys it remembered are dropped', () => {
    const keys = Array.from({ length: 10_000 }, (_, i) => `key-${i}`);
    for (let round = 0; round < 2; round++) for (const key of keys) assert.equal(keyHash(key), sha256(key));
    // Keys that differ only far apart, and in case, hash apart.
    assert.notEqual(keyHash('Step'), keyHash('step'));
    assert.equal(keyHash('step'), sha256('step'));
  });
});
