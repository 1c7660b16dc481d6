/**
 * openRedisStore against a real Redis: it works and quits its client on close; its calls fail with
 * STORE_ERROR (never an untyped error, never a hang) while Redis is unreachable; and
 * createRedisStore gives a client without an 'error' listener a silent one (ioredis would print
 * every failed reconnection), leaving a listener of the caller's alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { CairnError } from '@cairn/core';
import { createRedisStore, openRedisStore } from '@cairn/redis';
import { newPrefix, redisUrl, skip } from './support/fixture.js';
import { newRun, T0 } from './support/runs.js';

describe('openRedisStore', { skip }, () => {
  it('works, and close() quits the client it opened', async () => {
    const store = openRedisStore(redisUrl(), { prefix: newPrefix() });
    const { run } = await store.runs.create(newRun(), T0);
    assert.equal((await store.runs.get(run.id))?.id, run.id);
    await store.runs.delete(run.id);
    await store.close();
    await store.close();
  });

  it('fails with STORE_ERROR while Redis is unreachable, and reports the connection errors to onConnectionError', { timeout: 30_000 }, async () => {
    const seen: unknown[] = [];
    const store = openRedisStore('redis://127.0.0.1:1', { prefix: newPrefix(), onConnectionError: (error) => seen.push(error) });
    try {
      await assert.rejects(store.runs.get('r1'), (error: unknown) => CairnError.is(error, 'STORE_ERROR'));
      assert.ok(seen.length >= 1);
    } finally {
      await store.close();
    }
  });
});

describe('createRedisStore and the client error listener', { skip }, () => {
  it('adds a silent one only to a client that has none', async () => {
    const bare = new Redis(redisUrl(), { lazyConnect: true });
    createRedisStore({ redis: bare, prefix: newPrefix() });
    assert.equal(bare.listenerCount('error'), 1);
    const mine = () => {};
    const own = new Redis(redisUrl(), { lazyConnect: true });
    own.on('error', mine);
    createRedisStore({ redis: own, prefix: newPrefix() });
    assert.deepEqual(own.listeners('error'), [mine]);
    bare.disconnect();
    own.disconnect();
  });
});
