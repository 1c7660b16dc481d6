import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, type Json } from '@cairn/core';
import { MODES, keysOf, skip, withStore } from './support/fixture.js';
import { claimed, newRun, T0 } from './support/runs.js';

const rejectsWith = (promise: Promise<unknown>, code: string) =>
  assert.rejects(promise, (err: unknown) => {
    assert.ok(CairnError.is(err), `expected a CairnError, got ${String(err)}`);
    assert.equal(err.code, code);
    return true;
  });

/** Every key and value under the prefix, to prove a refused write changed nothing. */
async function dump(client: import('ioredis').Redis, prefix: string): Promise<string> {
  const out: string[] = [];
  for (const key of await keysOf(client, prefix)) out.push(`${key} => ${JSON.stringify(await client.call('DUMP', key))}`);
  return out.join('\n');
}

for (const mode of MODES) {
  describe(`contract (${mode.title})`, { skip }, () => {
    const opts = { cluster: mode.cluster };

    it('of 8 racing claimers on separate connections exactly one wins', async () => {
      await withStore(opts, async ({ store, peer }) => {
        for (let round = 0; round < 5; round++) {
          const { run } = await store.runs.create(newRun(), T0);
          const stores = Array.from({ length: 8 }, () => peer());
          const results = await Promise.all(stores.map((s, i) => s.runs.claim(run.id, `worker-${i}`, 30_000, T0 + 5)));
          const winners = results.filter((r) => r !== undefined);
          assert.equal(winners.length, 1);
          assert.equal(winners[0]?.fence, 1);
          assert.equal((await store.runs.get(run.id))?.lease?.owner, winners[0]?.lease?.owner);
        }
      });
    });

    it('a stale fence is LEASE_LOST on every fenced write and writes nothing', async () => {
      await withStore(opts, async ({ store, client, prefix }) => {
        const { id, fence } = await claimed(store);
        await store.steps.insert(id, fence, { key: 's', name: 's', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w1' }, T0 + 2);
        const taken = await store.runs.claim(id, 'w2', 60_000, T0 + 120_000);
        assert.equal(taken?.fence, fence + 1);
        const before = await dump(client, prefix);
        await rejectsWith(store.runs.transition(id, fence, { from: ['running'], to: 'completed', output: 1 }, T0 + 3), 'LEASE_LOST');
        await rejectsWith(store.runs.renew(id, fence, 1000, T0 + 3), 'LEASE_LOST');
        await rejectsWith(
          store.steps.insert(id, fence, { key: 't', name: 't', kind: 'task', seq: 1, status: 'running', maxAttempts: 1, worker: 'w1' }, T0 + 3),
          'LEASE_LOST',
        );
        await rejectsWith(
          store.steps.transition(
            id,
            fence,
            { key: 's', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 1 }, endAttempt: { status: 'succeeded', output: 1 } },
            T0 + 3,
          ),
          'LEASE_LOST',
        );
        await rejectsWith(store.state.set(id, fence, 'k', 1, T0 + 3), 'LEASE_LOST');
        assert.equal(await dump(client, prefix), before);
      });
    });

    it('CAS conflicts write nothing: run status, step status, step attempt, terminal run', async () => {
      await withStore(opts, async ({ store, client, prefix }) => {
        const { id, fence } = await claimed(store);
        await store.steps.insert(id, fence, { key: 's', name: 's', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w1' }, T0 + 2);
        const before = await dump(client, prefix);
        await rejectsWith(store.runs.transition(id, fence, { from: ['waiting'], to: 'completed' }, T0 + 3), 'RUN_CONFLICT');
        await rejectsWith(
          store.steps.transition(id, fence, { key: 's', from: { status: ['scheduled'], attempt: 1 }, to: { status: 'running' } }, T0 + 3),
          'STEP_CONFLICT',
        );
        await rejectsWith(
          store.steps.transition(id, fence, { key: 's', from: { status: ['running'], attempt: 2 }, to: { status: 'failed' } }, T0 + 3),
          'STEP_CONFLICT',
        );
        await rejectsWith(
          store.steps.transition(id, null, { key: 'missing', from: { status: ['running'], attempt: 1 }, to: { status: 'failed' } }, T0 + 3),
          'STEP_CONFLICT',
        );
        await rejectsWith(
          store.steps.insert('no-such-run', null, { key: 's', name: 's', kind: 'task', seq: 0, status: 'scheduled', maxAttempts: 1 }, T0),
          'RUN_NOT_FOUND',
        );
        assert.equal(await dump(client, prefix), before);
        await store.runs.transition(id, fence, { from: ['running'], to: 'cancelled' }, T0 + 4);
        const terminal = await dump(client, prefix);
        await rejectsWith(store.runs.transition(id, fence, { from: ['cancelled'], to: 'running' }, T0 + 5), 'RUN_CONFLICT');
        await rejectsWith(store.state.set(id, null, 'k', 1, T0 + 5), 'RUN_CONFLICT');
        await rejectsWith(
          store.steps.insert(id, null, { key: 'n', name: 'n', kind: 'task', seq: 1, status: 'scheduled', maxAttempts: 1 }, T0 + 5),
          'RUN_CONFLICT',
        );
        assert.deepEqual(await store.events.deliver(id, 'e', 1, T0 + 5), { delivered: false, duplicate: false });
        assert.equal(await store.runs.claim(id, 'w1', 1000, T0 + 5), undefined);
        await store.runs.wake(id, T0 + 5);
        assert.equal(await dump(client, prefix), terminal);
      });
    });

    it('waiting merges wakeAt with a wake requested while running; claim clears it', async () => {
      await withStore(opts, async ({ store }) => {
        const { id, fence } = await claimed(store, { wakeAt: T0 });
        assert.equal((await store.runs.get(id))?.wakeAt, undefined);
        await store.runs.wake(id, T0 + 10);
        const waiting = await store.runs.transition(id, fence, { from: ['running'], to: 'waiting', wakeAt: T0 + 5_000 }, T0 + 20);
        assert.equal(waiting.wakeAt, T0 + 10);
        assert.equal(waiting.lease, undefined);
        assert.deepEqual(await store.runs.findDue(T0 + 10, 10), [{ id, workflow: 'wf', reason: 'wake' }]);
        const again = await store.runs.claim(id, 'w1', 1000, T0 + 30);
        const later = await store.runs.transition(id, again!.fence, { from: ['running'], to: 'waiting', wakeAt: T0 + 5_000 }, T0 + 40);
        assert.equal(later.wakeAt, T0 + 5_000);
        assert.deepEqual(await store.runs.findDue(T0 + 4_999, 10), []);
      });
    });

    it('keeps undefined, null, 0, false and "" outputs distinct on runs, steps and attempts', async () => {
      await withStore(opts, async ({ store }) => {
        const values: Array<Json | undefined> = [undefined, null, 0, false, '', [], {}];
        for (const value of values) {
          const { id, fence } = await claimed(store);
          await store.steps.insert(id, fence, { key: 's', name: 's', kind: 'task', seq: 0, status: 'running', maxAttempts: 1, worker: 'w1' }, T0 + 2);
          const endAttempt = value === undefined ? { status: 'succeeded' as const } : { status: 'succeeded' as const, output: value };
          const to = value === undefined ? { status: 'succeeded' as const } : { status: 'succeeded' as const, output: value };
          const step = await store.steps.transition(id, fence, { key: 's', from: { status: ['running'], attempt: 1 }, to, endAttempt }, T0 + 3);
          const transition =
            value === undefined
              ? { from: ['running' as const], to: 'completed' as const }
              : { from: ['running' as const], to: 'completed' as const, output: value };
          const run = await store.runs.transition(id, fence, transition, T0 + 4);
          for (const [what, record] of [
            ['step', step],
            ['loaded step', (await store.steps.load(id))[0]],
            ['run', run],
            ['read run', await store.runs.get(id)],
            ['attempt', (await store.history.list(id))[0]],
          ] as const) {
            assert.ok(record, what);
            assert.equal('output' in record, value !== undefined, `${what} has output for ${JSON.stringify(value)}`);
            assert.deepStrictEqual(record.output, value, what);
          }
        }
      });
    });

    it('keeps hostile state keys byte for byte, and __proto__ as an own key', async () => {
      await withStore(opts, async ({ store }) => {
        const { id, fence } = await claimed(store);
        const keys = ['', 'a.b', '$set', '$', 'a:b{c}', '__proto__', 'constructor', 'ключ', '😀\u0000nul', 'x'.repeat(1500), ' ', '\n'];
        for (const [i, key] of keys.entries()) await store.state.set(id, fence, key, { i }, T0 + 2);
        const state = await store.state.get(id);
        assert.deepEqual(Object.keys(state).sort(), [...keys].sort());
        for (const [i, key] of keys.entries()) assert.deepEqual(Object.getOwnPropertyDescriptor(state, key)?.value, { i }, JSON.stringify(key).slice(0, 40));
        assert.equal(Object.getPrototypeOf(state), Object.prototype);
        assert.deepEqual(await store.state.get('no-such-run'), {});
      });
    });

    it('20 concurrent state.set of different keys from separate connections lose nothing', async () => {
      await withStore(opts, async ({ store, peer }) => {
        const { id, fence } = await claimed(store);
        await Promise.all(Array.from({ length: 20 }, (_, i) => peer().state.set(id, fence, `key-${i}`, i, T0 + 2)));
        const state = await store.state.get(id);
        assert.equal(Object.keys(state).length, 20);
        for (let i = 0; i < 20; i++) assert.equal(state[`key-${i}`], i);
      });
    });

    it('idempotent create: of 8 concurrent creates with one key exactly one creates', async () => {
      await withStore(opts, async ({ store, peer }) => {
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => peer().runs.create(newRun({ idempotencyKey: 'order-42', input: i }), T0 + i)));
        assert.equal(results.filter((r) => r.created).length, 1);
        assert.equal(new Set(results.map((r) => r.run.id)).size, 1);
        const page = await store.runs.list({ workflow: 'wf' });
        assert.equal(page.runs.length, 1);
      });
    });

    it('delete removes every key of the run and every index entry, and frees its idempotency key', async () => {
      await withStore(opts, async ({ store, client, prefix }) => {
        const keep = await claimed(store, { idempotencyKey: 'keep' });
        const before = await keysOf(client, prefix);
        const { id, fence } = await claimed(store, { idempotencyKey: 'gone', parent: { runId: keep.id, stepKey: 'c' } });
        await store.steps.insert(id, fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w1' }, T0 + 2);
        await store.steps.transition(
          id,
          fence,
          {
            key: 'a',
            from: { status: ['running'], attempt: 1 },
            to: { status: 'running', attempt: 2 },
            endAttempt: { status: 'failed' },
            startAttempt: { worker: 'w1' },
          },
          T0 + 3,
        );
        await store.steps.insert(id, fence, { key: 'b', name: 'b', kind: 'sleep', seq: 1, status: 'waiting', maxAttempts: 1, wakeAt: T0 + 9 }, T0 + 2);
        await store.state.set(id, fence, 'k', 1, T0 + 4);
        await store.events.deliver(id, 'e', { p: 1 }, T0 + 5);
        await store.runs.transition(id, fence, { from: ['running'], to: 'waiting', wakeAt: T0 + 100 }, T0 + 6);
        assert.equal(await store.runs.delete(id), true);
        assert.equal(await store.runs.delete(id), false);
        assert.deepEqual(await keysOf(client, prefix), before);
        for (const key of before.filter((k) => k.startsWith(`{${prefix}}`))) {
          const type = await client.type(key);
          const members =
            type === 'zset'
              ? ((await client.call('ZRANGE', key, '0', '-1')) as string[])
              : type === 'hash'
                ? [...Object.keys(await client.hgetall(key)), ...Object.values(await client.hgetall(key))]
                : [];
          assert.ok(!members.includes(id), `${key} still mentions ${id}`);
        }
        assert.equal(await store.runs.get(id), undefined);
        assert.deepEqual(await store.steps.load(id), []);
        assert.deepEqual(await store.history.list(id), []);
        assert.equal((await store.runs.create(newRun({ idempotencyKey: 'gone' }), T0 + 7)).created, true);
      });
    });

    it('refuses a client keyPrefix and a prefix with braces', async () => {
      const { Redis } = await import('ioredis');
      const { createRedisStore } = await import('@cairn/redis');
      const prefixed = new Redis({ lazyConnect: true, keyPrefix: 'app:' });
      assert.throws(
        () => createRedisStore({ redis: prefixed }),
        (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
      );
      prefixed.disconnect();
      const plain = new Redis({ lazyConnect: true });
      assert.throws(
        () => createRedisStore({ redis: plain, prefix: 'a{b}' }),
        (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
      );
      plain.disconnect();
    });
  });
}
