import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainKey, isReserved, parseChainKey } from '../src/engine/flow/start-chain.js';

// A small seeded generator (mulberry32): every failure prints the seed that made it.
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Keys built from the characters that could confuse the format: separators, digits, the word itself.
const PIECES = [':', ':after:', 'after', '0', '12', 'a', 'é', '😀', '\u0001', 'singleton', '/', ' '];

describe('start chains: the idempotency key of a chain run', () => {
  it('round-trips any kind, key and predecessor (2,000 generated, seeds printed on failure)', () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const next = random(seed);
      const pick = () => PIECES[Math.floor(next() * PIECES.length)]!;
      const key = Array.from({ length: Math.floor(next() * 8) }, pick).join('');
      const kind = ['singleton', 'debounce/30000', 'batch/10/5000'][seed % 3]!;
      const predecessor = next() < 0.3 ? '' : `01a2${Math.floor(next() * 1e9)}-${pick()}`;
      const made = chainKey({ workflow: 'w', kind, key }, predecessor);
      assert.ok(isReserved(made), `seed ${seed}: reserved`);
      assert.deepEqual(parseChainKey(made), { kind, key, predecessor }, `seed ${seed}: ${JSON.stringify(made)}`);
    }
  });

  it('reads no chain from a user key or from none', () => {
    assert.equal(parseChainKey(undefined), undefined);
    assert.equal(parseChainKey('singleton:1:k:after:'), undefined);
    assert.equal(isReserved('order-1'), false);
  });
});
