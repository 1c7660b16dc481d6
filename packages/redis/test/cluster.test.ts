import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { CairnError, createMemoryStore } from '@cairn/core';
import { Cluster } from 'ioredis';
import { createRedisStore, type RedisWorkflowStore } from '@cairn/redis';
import { startLocalCluster, type TestCluster } from './support/redis-cluster.js';
import { outcome, scenario } from './support/scenario.js';
import { newRun, T0 } from './support/runs.js';

const cluster: TestCluster = await startLocalCluster();
const skip = 'skip' in cluster ? cluster.skip : false;

describe('on a real three-node Redis Cluster', { skip }, () => {
  const clients: Cluster[] = [];
  const newClient = () => {
    if ('skip' in cluster) throw new Error(cluster.skip);
    const client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    clients.push(client);
    return client;
  };
  const newStore = (prefix = `c_${randomBytes(4).toString('hex')}`): RedisWorkflowStore => createRedisStore({ redis: newClient(), prefix });

  before(async () => {
    await newClient().ping();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => undefined)));
    if ('stop' in cluster) await cluster.stop();
  });

  it('defaults to cluster mode and refuses single-server mode on a Cluster client', () => {
    assert.equal(newStore().cluster, true);
    assert.throws(
      () => createRedisStore({ redis: newClient(), cluster: false }),
      (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
    );
  });

  it('answers the scripted life exactly like the memory store, with runs spread over the nodes', async () => {
    const store = newStore();
    const memory = createMemoryStore();
    for (const [title, call] of scenario(1_750_000_000_000)) {
      assert.deepStrictEqual(await outcome(() => call(store)), await outcome(() => call(memory)), title);
    }
  });

  it('of 8 racing claimers on separate cluster clients exactly one wins; state writes from 20 clients all land', async () => {
    const prefix = `c_${randomBytes(4).toString('hex')}`;
    const store = newStore(prefix);
    const peers = Array.from({ length: 8 }, () => newStore(prefix));
    for (let round = 0; round < 3; round++) {
      const { run } = await store.runs.create(newRun(), T0);
      const results = await Promise.all(peers.map((p, i) => p.runs.claim(run.id, `w${i}`, 60_000, T0 + 1)));
      const winners = results.filter((r) => r !== undefined);
      assert.equal(winners.length, 1);
      const fence = winners[0]!.fence;
      await Promise.all(Array.from({ length: 20 }, (_, i) => peers[i % peers.length]!.state.set(run.id, fence, `k${i}`, i, T0 + 2)));
      assert.equal(Object.keys(await store.state.get(run.id)).length, 20);
      assert.equal(await store.runs.delete(run.id), true);
    }
    assert.deepEqual((await store.runs.list({})).runs, []);
  });

  it('slots: each key is single-slot on a real cluster; 8 clients racing for a limit of 2 get exactly 2', async () => {
    const prefix = `c_${randomBytes(4).toString('hex')}`;
    const peers = Array.from({ length: 8 }, () => newStore(prefix));
    const keys = Array.from({ length: 6 }, (_, i) => `c:tenant-{${i}}`);
    for (const key of keys) {
      const grants = await Promise.all(
        peers.map((p, i) =>
          p.slots!.acquire({ key, limit: 2, holder: `w${i}`, expiresAt: T0 + 60_000, wait: { priority: 0, queuedAt: T0 + i, expiresAt: T0 + 60_000 } }, T0),
        ),
      );
      assert.equal(grants.filter((g) => g.acquired).length, 2, key);
      const { holders, waiters } = await peers[0]!.slots!.inspect(key, T0);
      assert.equal(holders.length, 2);
      assert.equal(waiters.length, 6);
      const first = await peers[0]!.slots!.release(key, holders[0]!.holder, T0 + 1);
      assert.equal(first, waiters[0]!.holder);
      assert.equal(await peers[0]!.slots!.renew(key, holders[1]!.holder, T0 + 90_000, T0 + 1), true);
    }
  });

  it('keeps working after SCRIPT FLUSH on every node', async () => {
    const store = newStore();
    const { run } = await store.runs.create(newRun(), T0);
    const claimed = await store.runs.claim(run.id, 'w1', 60_000, T0 + 1);
    const client = newClient();
    await Promise.all(client.nodes('master').map((node) => node.call('SCRIPT', 'FLUSH')));
    const done = await store.runs.transition(run.id, claimed!.fence, { from: ['running'], to: 'completed', output: 0 }, T0 + 2);
    assert.equal(done.output, 0);
    assert.deepEqual(
      (await store.runs.list({ status: 'completed' })).runs.map((r) => r.id),
      [run.id],
    );
  });
});
