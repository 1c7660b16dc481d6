import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { Db } from 'mongodb';
import { createMongoStore, type MongoStore } from '../src/index.js';
import { keyId } from '../src/slot-documents.js';
import { SLOT_LOCK_MS } from '../src/slot-lock.js';
import { newId } from './support/fixtures.js';
import { freshDb, running, skipReason } from './support/server.js';

// What the MongoDB store adds to the `store.slots` conformance group: its documents (fixed-length
// ids for long keys), holder order on the server, the exact line order under racing requests (the key's lock),
// a lock left by a dead process, and `priority` on the run document.
const T0 = 1_760_000_000_000;
const later = T0 + 60_000;

let shared: Db | undefined;
/** A case with a fresh store, its database and collection prefix (for raw looks at its documents). */
function slotTest(name: string, fn: (store: MongoStore, db: Db, prefix: string) => Promise<void>): void {
  test(name, { skip: skipReason }, async () => {
    shared ??= freshDb();
    const prefix = `s${randomUUID().slice(0, 8)}_`;
    const store = createMongoStore({ db: shared, collectionPrefix: prefix });
    await store.init();
    await fn(store, shared, prefix);
  });
}

slotTest('slots: long and hostile keys get fixed-length ids and never share slots', async (store, db, prefix) => {
  const slots = store.slots!;
  const keys = [`c:${'😀'.repeat(255)}`, `c:${'😀'.repeat(254)}😁`, 'c:{a}#0', 'c:{a}', 'c:$gt.x'];
  for (const [i, key] of keys.entries()) {
    assert.deepEqual(await slots.acquire({ key, limit: 1, holder: `h${i}`, expiresAt: later }, T0), { acquired: true }, JSON.stringify(key));
  }
  for (const [i, key] of keys.entries()) {
    assert.deepEqual((await slots.inspect(key, T0)).holders, [{ holder: `h${i}`, expiresAt: later }], JSON.stringify(key));
  }
  const ids = (await db.collection(`${prefix}slots`).find({}).toArray()).map((d) => String(d._id));
  assert.equal(ids.length, keys.length, 'one document per key');
  for (const id of ids) assert.equal(id.length, 43, id);
});

slotTest('slots: equal waiters are ordered by the holder by code point (UTF-8 bytes), not by JavaScript `<`', async (store) => {
  const slots = store.slots!;
  await slots.acquire({ key: 'k', limit: 1, holder: 'busy', expiresAt: later }, T0);
  const wait = { priority: 0, queuedAt: T0, expiresAt: later };
  for (const holder of ['😀', '\uFFFF', 'a']) {
    assert.deepEqual(await slots.acquire({ key: 'k', limit: 1, holder, expiresAt: later, wait }, T0 + 1), { acquired: false, freeAt: later });
  }
  assert.deepEqual(
    (await slots.inspect('k', T0 + 2)).waiters.map((w) => w.holder),
    ['a', '\uFFFF', '😀'],
  );
  assert.equal(await slots.release('k', 'busy', T0 + 3), 'a');
});

slotTest('slots: of 8 waiters re-asking at once after a release exactly the first in line is granted', async (store) => {
  const slots = store.slots!;
  for (let round = 0; round < 3; round++) {
    const key = `line-${round}`;
    await slots.acquire({ key, limit: 1, holder: 'busy', expiresAt: later }, T0);
    const waits = Array.from({ length: 8 }, (_, i) => ({
      holder: `w${i}`,
      wait: { priority: (i * 5 + round) % 3, queuedAt: T0 + ((i * 7) % 8), expiresAt: later },
    }));
    for (const w of waits) assert.equal((await slots.acquire({ key, limit: 1, holder: w.holder, expiresAt: later, wait: w.wait }, T0 + 1)).acquired, false);
    const line = (await slots.inspect(key, T0 + 1)).waiters.map((w) => w.holder);
    assert.equal(await slots.release(key, 'busy', T0 + 2), line[0]);
    const grants = await Promise.all(waits.map((w) => slots.acquire({ key, limit: 1, holder: w.holder, expiresAt: later, wait: w.wait }, T0 + 3)));
    assert.deepEqual(
      waits.filter((_, i) => grants[i]!.acquired).map((w) => w.holder),
      [line[0]],
    );
    assert.deepEqual(
      (await slots.inspect(key, T0 + 3)).waiters.map((w) => w.holder),
      line.slice(1),
    );
  }
});

slotTest('slots: of 8 racing requests from two store objects for a limit of 2 exactly 2 are granted', async (store, db, prefix) => {
  const peer = createMongoStore({ db, collectionPrefix: prefix });
  for (let round = 0; round < 3; round++) {
    const key = `race-${round}`;
    const grants = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? peer : store).slots!.acquire({ key, limit: 2, holder: `w${i}`, expiresAt: later }, T0)),
    );
    assert.equal(grants.filter((g) => g.acquired).length, 2);
    assert.equal((await store.slots!.inspect(key, T0)).holders.length, 2);
  }
});

slotTest("slots: a lock left by a dead process is taken over once the callers' clock passes it", async (store, db, prefix) => {
  const slots = store.slots!;
  const wait = { priority: 0, queuedAt: T0, expiresAt: later };
  await slots.acquire({ key: 'k', limit: 1, holder: 'x', expiresAt: later }, T0);
  await slots.acquire({ key: 'k', limit: 1, holder: 'w', expiresAt: later, wait }, T0);
  const locks = db.collection<{ _id: string; owner: string; expiresAt: number }>(`${prefix}slot_locks`);
  await locks.insertOne({ _id: keyId('k'), owner: 'dead', expiresAt: T0 + SLOT_LOCK_MS });
  // A waiter exists, so this request takes the slow path, under the lock.
  assert.deepEqual(await slots.acquire({ key: 'k', limit: 1, holder: 'a', expiresAt: later, wait }, T0 + SLOT_LOCK_MS), { acquired: false, freeAt: later });
  assert.equal(await locks.countDocuments({}), 0, 'the lock is released after the operation');
  assert.deepEqual(
    (await slots.inspect('k', T0 + SLOT_LOCK_MS)).waiters.map((w) => w.holder),
    ['a', 'w'],
  );
});

slotTest('slots: an uncontended key costs one command per acquire, renew and release; a waiter sends the next ones the slow way', async (store) => {
  const slots = store.slots!;
  const server = running();
  const commandsOf = async (call: () => Promise<unknown>): Promise<string[]> => {
    server.commands.length = 0;
    await call();
    return [...server.commands];
  };
  await slots.inspect('warm-up', T0); // the store detects the server once
  assert.deepEqual(
    await commandsOf(() => slots.acquire({ key: 'c:k', limit: 2, holder: 'r1', expiresAt: later, wait: { priority: 0, queuedAt: T0, expiresAt: later } }, T0)),
    ['update'],
  );
  assert.deepEqual(await commandsOf(() => slots.renew('c:k', 'r1', later + 1, T0 + 1)), ['update']);
  assert.deepEqual(await commandsOf(() => slots.release('c:k', 'r1', T0 + 2)), ['update']);
  assert.deepEqual(await commandsOf(() => slots.acquire({ key: 'r:k', limit: 3, holder: 't1', expiresAt: later }, T0)), ['update']);
  // Full: the waiter takes the slow path (lock, reads, the write raising wn, its document, unlock).
  await slots.acquire({ key: 'c:one', limit: 1, holder: 'a', expiresAt: later }, T0);
  const slow = await commandsOf(() =>
    slots.acquire({ key: 'c:one', limit: 1, holder: 'b', expiresAt: later, wait: { priority: 0, queuedAt: T0, expiresAt: later } }, T0),
  );
  assert.ok(slow.length > 1, slow.join(', '));
  assert.equal(await slots.release('c:one', 'a', T0 + 1), 'b');
  assert.deepEqual(
    await slots.acquire({ key: 'c:one', limit: 1, holder: 'b', expiresAt: later, wait: { priority: 0, queuedAt: T0, expiresAt: later } }, T0 + 2),
    { acquired: true },
  );
  // The line is empty again: the next release is one command.
  assert.deepEqual(await commandsOf(() => slots.release('c:one', 'b', T0 + 3)), ['update']);
});

slotTest('priority: stored on the run document and read back; 0 is stored absent', async (store) => {
  const { run } = await store.runs.create({ id: newId(), workflow: 'wf', version: 'v1', input: null, priority: 1000 }, T0);
  assert.equal(run.priority, 1000);
  assert.equal((await store.runs.get(run.id))?.priority, 1000);
  assert.equal((await store.runs.list({})).runs[0]?.priority, 1000);
  const { run: zero } = await store.runs.create({ id: newId(), workflow: 'wf', version: 'v1', input: null, priority: 0 }, T0);
  assert.equal('priority' in zero, false);
  assert.equal('priority' in (await store.runs.get(zero.id))!, false);
});
