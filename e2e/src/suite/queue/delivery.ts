import assert from 'node:assert/strict';
import { CairnError, type Json } from '@cairn/core';
import type { Queue } from '@cairn/core/backend';
import { HOSTILE_NAMES } from '../fixtures/hostile-strings.js';
import { payloadOfBytes } from '../fixtures/payloads.js';
import { queueCase, type QueueCase } from './queue-case.js';
import { Deliveries, QUEUE, sleep, startWorker, waitFor } from './support.js';

const exactlyOnce = queueCase('queue.delivery.exactly-once', 'every job is delivered exactly once to the workers sharing a queue name', async (env) => {
  const queues: Queue[] = [env.queue];
  if (env.queue.capabilities.distributed) queues.push(await env.openPeer());
  const deliveries = new Deliveries();
  const ids = new Set<string>();
  // Half the jobs wait for workers that start later, half arrive while they run.
  for (let i = 0; i < 30; i++) await queues[i % queues.length]!.send(QUEUE, { id: i });
  let n = 0;
  for (const queue of queues) {
    for (let w = 0; w < 2; w++) {
      const worker = `w${n++}`;
      await startWorker(
        env,
        queue,
        QUEUE,
        async (job) => {
          deliveries.record(job, worker);
          assert.equal(job.queue, QUEUE, 'job.queue names the queue it was sent to');
          assert.ok(typeof job.id === 'string' && job.id !== '', 'job.id is a non-empty string');
          ids.add(job.id);
          await sleep(2);
        },
        { concurrency: 4 },
      );
    }
  }
  for (let i = 30; i < 60; i++) await queues[i % queues.length]!.send(QUEUE, { id: i });
  await waitFor(
    () => deliveries.all.length >= 60,
    env.deliveryTimeoutMs,
    '60 deliveries',
    () => deliveries.ids(),
  );
  await sleep(300);
  const counts = deliveries.counts();
  for (let i = 0; i < 60; i++) assert.equal(counts.get(i), 1, `job ${i} delivered ${counts.get(i) ?? 0} times`);
  assert.equal(deliveries.all.length, 60, `no extra deliveries: ${deliveries.ids()}`);
  assert.equal(ids.size, 60, 'every job has its own id');
});

/** Values whose JSON round trip must come back exactly (compared as JSON text, key order included). */
function roundTripPayloads(): Json[] {
  return [
    null,
    0,
    false,
    true,
    '',
    'ünïcödé 工作流 🚀 𝄞',
    'nul \u0000 inside',
    'lone surrogate \ud800 here',
    1.5e300,
    -2.5e-300,
    Number.MAX_SAFE_INTEGER,
    [],
    {},
    [null, [[]], {}, [0, false, '']],
    { z: 1, a: 2, m: { y: [3, { b: null, a: 'x' }] } },
    { '10': 'ten', '2': 'two', b: 'b', a: 'a' },
    Object.fromEntries(HOSTILE_NAMES.map((name, i) => [name, name + String(i)])),
    [...HOSTILE_NAMES],
    payloadOfBytes(256 * 1024),
  ];
}

const jsonRoundTrip = queueCase(
  'queue.delivery.json-round-trip',
  'payloads come back exactly as a JSON round trip leaves them; non-JSON payloads are refused',
  async (env) => {
    const payloads = roundTripPayloads();
    const expected = payloads.map((p) => JSON.stringify(p));
    // As JSON.stringify: an undefined property is left out, an undefined item becomes null.
    const withUndefined = { a: 1, gone: undefined, list: [undefined, 2] } as unknown as Json;
    expected.push(JSON.stringify({ a: 1, list: [null, 2] }));
    const received: string[] = [];
    await startWorker(
      env,
      env.queue,
      QUEUE,
      async (job) => {
        received.push(JSON.stringify(job.payload));
      },
      { concurrency: 4 },
    );
    for (const payload of [...payloads, withUndefined]) await env.queue.send(QUEUE, payload);
    for (const bad of [undefined, () => 1, { f: () => 1 }, { n: 10n }, { x: Number.NaN }, new Map([[1, 2]]), { at: new Date(0) }]) {
      await assert.rejects(
        env.queue.send(QUEUE, bad as unknown as Json),
        (error: unknown) => CairnError.is(error, 'NOT_SERIALIZABLE'),
        `a non-JSON payload (${typeof bad}) is refused with NOT_SERIALIZABLE`,
      );
    }
    await waitFor(() => received.length >= expected.length, env.deliveryTimeoutMs, `${expected.length} deliveries`);
    await sleep(200);
    assert.equal(received.length, expected.length, 'refused payloads were not enqueued');
    const remaining = [...received];
    for (const text of expected) {
      const at = remaining.indexOf(text);
      assert.notEqual(at, -1, `payload ${text.slice(0, 80)} came back unchanged`);
      remaining.splice(at, 1);
    }
  },
);

const closeDrains = queueCase('queue.delivery.close', 'close() waits for running jobs, then refuses send and work with ENGINE_STOPPED', async (env) => {
  let finished = false;
  let started = false;
  await env.queue.work(QUEUE, async () => {
    started = true;
    await sleep(300);
    finished = true;
  });
  await env.queue.send(QUEUE, { id: 'slow' });
  await waitFor(() => started, env.deliveryTimeoutMs, 'the slow job to start');
  await env.queue.close();
  assert.ok(finished, 'close() resolved only after the running job settled');
  await assert.rejects(env.queue.send(QUEUE, { id: 'late' }), (e: unknown) => CairnError.is(e, 'ENGINE_STOPPED'));
  await assert.rejects(
    env.queue.work(QUEUE, async () => {}),
    (e: unknown) => CairnError.is(e, 'ENGINE_STOPPED'),
  );
  await env.queue.close();
});

/** Delivery, JSON payloads and shutdown. */
export const deliveryCases: readonly QueueCase[] = [exactlyOnce, jsonRoundTrip, closeDrains];
