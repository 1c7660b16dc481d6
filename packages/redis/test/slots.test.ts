import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashTagOf } from '@cairn/redis';
import { MODES, keysOf, skip, withStore } from './support/fixture.js';
import { newRun, T0 } from './support/runs.js';

// What the Redis store adds to the `store.slots` conformance group: its key layout (one hash tag
// per slot key, keys with braces or `=` kept apart), the line member's encoding (negative queuedAt,
// the priority bounds, holders whose code point order differs from JavaScript's `<`), racing
// connections, and `priority` on the run hash.
for (const mode of MODES) {
  describe(`slots (${mode.title})`, { skip }, () => {
    const opts = { cluster: mode.cluster };
    const later = T0 + 60_000;

    it("a slot key's keys share one hash tag of their own; hostile keys never share keys", async () => {
      await withStore(opts, async ({ store, client, prefix }) => {
        const slots = store.slots!;
        const keys = ['c:tenant', 'c:{tenant}', '=c', 'c:=', 'c:}{', 'c:😀 * ? [x]', 'k'.repeat(512)];
        for (const [i, key] of keys.entries()) {
          assert.deepEqual(await slots.acquire({ key, limit: 1, holder: `h${i}`, expiresAt: later }, T0), { acquired: true }, JSON.stringify(key));
        }
        for (const [i, key] of keys.entries()) {
          const snapshot = await slots.inspect(key, T0);
          assert.deepEqual(snapshot.holders, [{ holder: `h${i}`, expiresAt: later }], JSON.stringify(key));
        }
        const slotKeys = (await keysOf(client, prefix)).filter((k) => k.startsWith(`${prefix}:slot:`));
        const tags = new Set(slotKeys.map(hashTagOf));
        assert.equal(tags.size, keys.length, 'one hash tag per slot key');
        assert.equal(slotKeys.length, keys.length, 'only the held set exists while nobody waits');
        await client.eval("return redis.call('PING')", 0); // the client still answers
        for (const key of keys) assert.equal(await slots.release(key, `h${keys.indexOf(key)}`, T0), undefined);
        assert.deepEqual(
          (await keysOf(client, prefix)).filter((k) => k.startsWith(`${prefix}:slot:`)),
          [],
          'nothing left once released',
        );
      });
    });

    it('orders waiters by priority, queuedAt (negative too) and holder by code point, which JavaScript `<` does not give', async () => {
      await withStore(opts, async ({ store }) => {
        const slots = store.slots!;
        assert.equal((await slots.acquire({ key: 'k', limit: 1, holder: 'busy', expiresAt: later }, T0)).acquired, true);
        // By code point (UTF-8 bytes EF BF BF < F0 9F 98 80) '\uFFFF' comes before '😀'; JavaScript's `<` says the opposite.
        const wait = { priority: 0, queuedAt: T0, expiresAt: later };
        for (const holder of ['\uFFFF', '😀', 'a']) {
          assert.deepEqual(await slots.acquire({ key: 'k', limit: 1, holder, expiresAt: later, wait }, T0 + 1), { acquired: false, freeAt: later });
        }
        const high = { priority: 1000, queuedAt: T0 + 5, expiresAt: later };
        const low = { priority: -1000, queuedAt: -5, expiresAt: later };
        await slots.acquire({ key: 'k', limit: 1, holder: 'high', expiresAt: later, wait: high }, T0 + 1);
        await slots.acquire({ key: 'k', limit: 1, holder: 'low', expiresAt: later, wait: low }, T0 + 1);
        const { waiters } = await slots.inspect('k', T0 + 2);
        assert.deepEqual(
          waiters.map((w) => w.holder),
          ['high', 'a', '\uFFFF', '😀', 'low'],
        );
        assert.deepEqual(waiters[0], { holder: 'high', ...high });
        assert.deepEqual(waiters[4], { holder: 'low', ...low });
        assert.equal(await slots.release('k', 'busy', T0 + 3), 'high');
      });
    });

    it('of 8 connections racing for a key of limit 2 exactly 2 are granted, each time', async () => {
      await withStore(opts, async ({ store, peer }) => {
        const peers = Array.from({ length: 8 }, () => peer());
        for (let round = 0; round < 3; round++) {
          const key = `race-${round}`;
          const grants = await Promise.all(peers.map((p, i) => p.slots!.acquire({ key, limit: 2, holder: `w${i}`, expiresAt: later }, T0)));
          assert.equal(grants.filter((g) => g.acquired).length, 2);
          assert.equal((await store.slots!.inspect(key, T0)).holders.length, 2);
        }
      });
    });

    it('stores a run priority on the run hash; 0 is stored absent', async () => {
      await withStore(opts, async ({ store }) => {
        const { run } = await store.runs.create({ ...newRun(), priority: -7 }, T0);
        assert.equal(run.priority, -7);
        assert.equal((await store.runs.get(run.id))?.priority, -7);
        assert.equal((await store.runs.list({})).runs[0]?.priority, -7);
        const { run: zero } = await store.runs.create({ ...newRun(), priority: 0 }, T0);
        assert.equal('priority' in zero, false);
        assert.equal('priority' in (await store.runs.get(zero.id))!, false);
      });
    });
  });
}
