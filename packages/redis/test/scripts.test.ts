import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError } from '@cairn/core';
import { Redis } from 'ioredis';
import { createRedisStore, hashTagOf, runTag } from '@cairn/redis';
import { scriptsFor } from '../src/scripts/index.js';
import { MODES, keysOf, newPrefix, skip, withStore } from './support/fixture.js';
import { newRun, T0 } from './support/runs.js';

/** Redis Cluster's CRC16 (XMODEM) slot of a key, from its hash tag. */
function slotOf(key: string): number {
  let crc = 0;
  for (const byte of Buffer.from(hashTagOf(key), 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

for (const mode of MODES) {
  describe(`scripts and keys (${mode.title})`, { skip }, () => {
    const opts = { cluster: mode.cluster };

    it('keeps working after SCRIPT FLUSH mid-run: the next call re-sends the script transparently', async () => {
      await withStore(opts, async ({ store, client }) => {
        const { run } = await store.runs.create(newRun(), T0);
        const claimed = await store.runs.claim(run.id, 'w1', 60_000, T0 + 1);
        await store.steps.insert(
          run.id,
          claimed!.fence,
          { key: 's', name: 's', kind: 'task', seq: 0, status: 'running', maxAttempts: 1, worker: 'w1' },
          T0 + 2,
        );
        const sha = scriptsFor(mode.cluster ? 'split' : 'combined').transitionStep.sha;
        assert.deepEqual(await client.call('SCRIPT', 'EXISTS', sha), [0]);
        await client.call('SCRIPT', 'FLUSH');
        const step = await store.steps.transition(
          run.id,
          claimed!.fence,
          { key: 's', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 'ok' }, endAttempt: { status: 'succeeded', output: 'ok' } },
          T0 + 3,
        );
        assert.equal(step.output, 'ok');
        assert.deepEqual(await client.call('SCRIPT', 'EXISTS', sha), [1], 'EVAL cached it again');
        await client.call('SCRIPT', 'FLUSH');
        const done = await store.runs.transition(run.id, claimed!.fence, { from: ['running'], to: 'completed', output: 1 }, T0 + 4);
        assert.equal(done.status, 'completed');
        assert.equal((await store.history.list(run.id))[0]?.status, 'succeeded');
        await client.call('SCRIPT', 'FLUSH');
        assert.equal(await store.runs.delete(run.id), true);
      });
    });

    it('every key a run owns falls inside its hash tag (one slot), hostile ids included', async () => {
      await withStore(opts, async ({ store, client, prefix }) => {
        const ids = ['plain-id', '{braced}', 'a}b{c', '}', '{', '', '=lead', 'ключ 😀', 'x'.repeat(300)];
        for (const id of ids) {
          await store.runs.create(newRun({ id, idempotencyKey: `k-${id}` }), T0);
          const { fence } = (await store.runs.claim(id, 'w1', 60_000, T0 + 1))!;
          await store.steps.insert(id, fence, { key: '{s}', name: 's', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w1' }, T0 + 2);
          await store.steps.transition(
            id,
            fence,
            {
              key: '{s}',
              from: { status: ['running'], attempt: 1 },
              to: { status: 'running', attempt: 2 },
              endAttempt: { status: 'failed' },
              startAttempt: { worker: 'w1' },
            },
            T0 + 3,
          );
          await store.state.set(id, fence, '{k}', 1, T0 + 4);
          await store.events.deliver(id, '{e}', 1, T0 + 5);
          await store.runs.transition(id, fence, { from: ['running'], to: 'waiting', wakeAt: T0 + 10 }, T0 + 6);
        }
        await store.versions.upsert('wf', 'v1', {}, T0);
        const keys = await keysOf(client, prefix);
        const tags = new Map(ids.map((id) => [runTag(id), id]));
        const perRun = new Map<string, string[]>();
        for (const key of keys) {
          const tag = hashTagOf(key);
          if (key.startsWith(`{${prefix}}`)) {
            assert.equal(tag, prefix, `global key ${key}`);
            continue;
          }
          assert.ok(key.startsWith(`${prefix}:run:{`), `unexpected key ${key}`);
          const id = tags.get(tag);
          assert.ok(id !== undefined, `key ${key} has tag ${tag}, which is no run's`);
          assert.ok(key.startsWith(`${prefix}:run:{${tag}}`), `${key} does not start with its run's key`);
          perRun.set(id, [...(perRun.get(id) ?? []), key]);
        }
        for (const id of ids) {
          const owned = perRun.get(id) ?? [];
          // run hash, key set, steps, atts, step hash, 2 attempt hashes, state, messages
          assert.equal(owned.length, 9, `${JSON.stringify(id)} owns ${owned.join(', ')}`);
          assert.equal(new Set(owned.map(slotOf)).size, 1, `${JSON.stringify(id)} spans several slots`);
        }
      });
    });

    it('answers with STORE_ERROR (cause kept) when Redis is unreachable', async () => {
      const dead = new Redis({ port: 1, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
      dead.on('error', () => {});
      const store = createRedisStore({ redis: dead, prefix: newPrefix(), cluster: mode.cluster });
      for (const call of [() => store.runs.get('x'), () => store.runs.claim('x', 'w', 1, 1), () => store.runs.list({}), () => store.versions.list('wf')]) {
        await assert.rejects(call(), (err: unknown) => {
          assert.ok(CairnError.is(err, 'STORE_ERROR'), String(err));
          assert.ok(err.cause instanceof Error);
          return true;
        });
      }
      await store.close();
      dead.disconnect();
    });
  });
}
