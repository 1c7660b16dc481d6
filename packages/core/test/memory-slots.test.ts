import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '@cairn/core';

describe('memory store slots', () => {
  it('orders waiters of equal priority and queuedAt by holder code point (the UTF-8 byte order of the server backends), not by UTF-16 unit', async () => {
    const slots = createMemoryStore().slots!;
    await slots.acquire({ key: 'k', limit: 1, holder: 'a', expiresAt: 1000 }, 0);
    // U+1D11E is after U+E000 by code point, but its UTF-16 lead surrogate (0xD834) is before 0xE000.
    for (const holder of ['𝄞', '\uE000', 'z'])
      await slots.acquire({ key: 'k', limit: 1, holder, expiresAt: 1000, wait: { priority: 0, queuedAt: 5, expiresAt: 2000 } }, 1);
    assert.deepEqual(
      (await slots.inspect('k', 2)).waiters.map((w) => w.holder),
      ['z', '\uE000', '𝄞'],
    );
    assert.equal(await slots.release('k', 'a', 3), 'z');
  });

  it('forgets a key once nobody holds or waits (inspect of it is empty, a new limit applies)', async () => {
    const slots = createMemoryStore().slots!;
    await slots.acquire({ key: 'k', limit: 1, holder: 'a', expiresAt: 1000 }, 0);
    await slots.release('k', 'a', 1);
    assert.deepEqual(await slots.inspect('k', 1), { holders: [], waiters: [] });
    assert.deepEqual(await slots.acquire({ key: 'k', limit: 2, holder: 'b', expiresAt: 1000 }, 2), { acquired: true });
    assert.deepEqual(await slots.acquire({ key: 'k', limit: 2, holder: 'c', expiresAt: 1000 }, 2), { acquired: true });
  });
});
