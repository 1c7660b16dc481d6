import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CairnError } from '@cairn/core';
import type { Job, Queue } from '@cairn/core/backend';
import { deleteRedisPrefix, stopSharedServices } from '@cairn/conformance/services';
import { createBullMQQueue } from '@cairn/queue-bullmq';
import { Redis } from 'ioredis';
import { redisOptions } from './support/bullmq-harness.js';
import { provideRedis } from './support/redis.js';
import { sleep, waitFor } from './support/wait-for.js';

const server = await provideRedis();

describe('@cairn/queue-bullmq', { skip: 'skip' in server ? `no Redis: ${server.skip}` : false }, () => {
  const url = 'url' in server ? server.url : '';
  const cleanups: Array<() => Promise<unknown>> = [];
  let n = 0;
  const prefix = () => `qbt${process.pid}_${++n}`;
  const client = (db = 0) => {
    const c = new Redis(url, { db, maxRetriesPerRequest: 1 });
    cleanups.push(async () => c.status === 'end' || c.quit());
    return c;
  };
  const track = (queue: Queue, p: string, db = 0) => {
    cleanups.push(async () => {
      await queue.close();
      const u = new URL(url);
      u.pathname = `/${db}`;
      await deleteRedisPrefix(u.toString(), `${p}:`);
    });
    return queue;
  };
  /** Connections the server has open whose name starts with `name` (or all, when absent). */
  const connections = async (admin: Redis, name?: string) =>
    ((await admin.client('LIST')) as string).split('\n').filter((line) => line.trim() !== '' && (name === undefined || line.includes(` name=${name}`))).length;

  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await stopSharedServices();
  });

  it('keeps every key under the prefix, and workers read from it', async () => {
    const p = prefix();
    const admin = client();
    const queue = track(createBullMQQueue({ connection: admin, prefix: p }), p);
    const seen: Job[] = [];
    await queue.work('pfx', async (job) => void seen.push(job));
    await queue.send('pfx', { a: 1 });
    await waitFor(() => seen.length === 1, 10_000, 'the job');
    const keys = await admin.keys('*');
    assert.ok(
      keys.some((k) => k.startsWith(`${p}:pfx:`)),
      'the queue keys carry the prefix',
    );
    assert.deepEqual(
      keys.filter((k) => k.startsWith('bull:')),
      [],
      "nothing under BullMQ's default prefix",
    );
  });

  it("passes the given client's settings (here: db 5) to workers too", async () => {
    const p = prefix();
    const inDb5 = client(5);
    const queue = track(createBullMQQueue({ connection: inDb5, prefix: p }), p, 5);
    const seen: Job[] = [];
    await queue.send('db5', { where: 'db5' });
    assert.ok((await inDb5.keys(`${p}:*`)).length > 0, 'the job was written to db 5');
    // A worker connected to db 0 would never see it.
    await queue.work('db5', async (job) => void seen.push(job));
    await waitFor(() => seen.length === 1, 10_000, 'the job in db 5');
  });

  it('never closes a client it was given; close() still stops its workers', async () => {
    const p = prefix();
    const given = client();
    const queue = track(createBullMQQueue({ connection: given, prefix: p }), p);
    await queue.work('given', async () => {});
    await queue.send('given', {});
    await queue.close();
    assert.equal(given.status, 'ready');
    assert.equal(await given.ping(), 'PONG');
  });

  it('opens one connection for all sends when given options, and closes everything it opened', async () => {
    const admin = client();
    const p = prefix();
    const tag = `cairn-conn-test-${process.pid}`;
    const before = await connections(admin, tag);
    assert.equal(before, 0);
    const queue = track(createBullMQQueue({ connection: { ...redisOptions(url), connectionName: tag }, prefix: p }), p);
    for (let i = 0; i < 50; i++) await queue.send(`name-${i % 5}`, { i });
    assert.equal(await connections(admin, tag), 1, 'five queue names and 50 sends share one connection');
    const worker = await queue.work('name-0', async () => {});
    await sleep(100);
    assert.ok((await connections(admin)) > 1);
    await worker.stop();
    await queue.close();
    await sleep(100);
    assert.equal(await connections(admin, tag), 0, 'close() closed the connection the adapter opened');
  });

  it('refuses what BullMQ cannot honour', async () => {
    const p = prefix();
    const queue = track(createBullMQQueue({ connection: client(), prefix: p }), p);
    const unsupported = (e: unknown) => CairnError.is(e, 'QUEUE_UNSUPPORTED');
    const invalid = (e: unknown) => CairnError.is(e, 'INVALID_INPUT');
    await assert.rejects(queue.send('q', {}, { group: { id: 'g' } }), unsupported);
    await assert.rejects(
      queue.work('q', async () => {}, { groupConcurrency: 2 }),
      unsupported,
    );
    await assert.rejects(queue.send('q', {}, { priority: 2 ** 21 }), invalid);
    await assert.rejects(queue.send('q', {}, { priority: 0.5 }), invalid);
    await assert.rejects(queue.send('a:b', {}), invalid);
    await assert.rejects(queue.send('q', {}, { delayMs: Number.NaN }), invalid);
    await assert.rejects(
      queue.work('q', async () => {}, { concurrency: 1.5 }),
      invalid,
    );
    assert.throws(() => createBullMQQueue({ connection: { ...redisOptions(url), keyPrefix: 'x:' } }), invalid);
    assert.throws(() => createBullMQQueue({ connection: undefined as never }), invalid);
    for (const bad of [2 ** 31, 0, 1.5, Number.NaN]) {
      assert.throws(() => createBullMQQueue({ connection: client(), lockDurationMs: bad }), invalid, `lockDurationMs ${bad}`);
      assert.throws(() => createBullMQQueue({ connection: client(), stalledIntervalMs: bad }), invalid, `stalledIntervalMs ${bad}`);
    }
    assert.equal(queue.capabilities.groups, false);
  });

  it('stores a delay beyond a Node.js timer (30 days, 100 years) as its full due time', async () => {
    const p = prefix();
    const admin = client();
    const queue = track(createBullMQQueue({ connection: admin, prefix: p }), p);
    const day = 86_400_000;
    const sentAt = Date.now();
    await queue.send('long', { id: 'month' }, { delayMs: 30 * day });
    await queue.send('long', { id: 'century' }, { delayMs: 36_525 * day });
    // BullMQ keeps delayed jobs in a sorted set scored by due time * 4096 (+ a counter): the score
    // says when the job becomes ready. A 100-year score exceeds 2^53, so it is exact only to a few
    // units, i.e. well under a millisecond of due time.
    const entries = await admin.zrange(`${p}:long:delayed`, '0', '-1', 'WITHSCORES');
    const dueTimes = new Map<string, number>();
    for (let i = 0; i < entries.length; i += 2) {
      const data = JSON.parse((await admin.hget(`${p}:long:${entries[i]!}`, 'data')) ?? 'null') as { id: string };
      dueTimes.set(data.id, Math.floor(Number(entries[i + 1]) / 4096));
    }
    for (const [id, delay] of [
      ['month', 30 * day],
      ['century', 36_525 * day],
    ] as const) {
      const due = dueTimes.get(id);
      assert.ok(due !== undefined && due >= sentAt + delay && due <= Date.now() + delay, `${id}: due at ${due}, sent at ${sentAt} + ${delay}`);
    }
  });

  it('reports a throwing handler to onError with its job', async () => {
    const p = prefix();
    const errors: Array<{ error: unknown; job?: Job }> = [];
    const queue = track(
      createBullMQQueue({ connection: client(), prefix: p, onError: (error, job) => void errors.push(job === undefined ? { error } : { error, job }) }),
      p,
    );
    await queue.work('err', async () => {
      throw new Error('boom');
    });
    await queue.send('err', { id: 'x' });
    await waitFor(() => errors.length === 1, 10_000, 'the error');
    assert.equal((errors[0]!.error as Error).message, 'boom');
    assert.deepEqual(errors[0]!.job?.payload, { id: 'x' });
  });
});
