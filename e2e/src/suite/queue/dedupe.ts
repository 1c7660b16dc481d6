import assert from 'node:assert/strict';
import { queueCase, type QueueCase } from './queue-case.js';
import { Deliveries, QUEUE, sleep, startWorker, waitFor } from './support.js';

const whileQueued = queueCase(
  'queue.dedupe.while-queued',
  'a send whose dedupe key is held by a queued job (ready or delayed) does nothing; keyless sends never dedupe',
  async (env) => {
    await env.queue.send(QUEUE, { id: 'a1' }, { dedupeKey: 'a' });
    await env.queue.send(QUEUE, { id: 'a2' }, { dedupeKey: 'a' });
    await env.queue.send(QUEUE, { id: 'b1' }, { dedupeKey: 'b' });
    await env.queue.send(QUEUE, { id: 'c1' }, { dedupeKey: 'c', delayMs: 300 });
    await env.queue.send(QUEUE, { id: 'c2' }, { dedupeKey: 'c' });
    await env.queue.send(QUEUE, { id: 'n1' });
    await env.queue.send(QUEUE, { id: 'n2' });
    if (env.queue.capabilities.distributed) {
      // The key is held across processes, not only in the sender's memory.
      const peer = await env.openPeer();
      await peer.send(QUEUE, { id: 'a3' }, { dedupeKey: 'a' });
    }
    const deliveries = new Deliveries();
    await startWorker(env, env.queue, QUEUE, async (job) => void deliveries.record(job, 'w'), { concurrency: 2 });
    await waitFor(
      () => deliveries.of('c1').length > 0 && deliveries.all.length >= 5,
      env.deliveryTimeoutMs + 300,
      'the five distinct jobs',
      () => deliveries.ids(),
    );
    await sleep(env.settleMs);
    const counts = Object.fromEntries(deliveries.counts());
    assert.deepEqual(counts, { a1: 1, b1: 1, c1: 1, n1: 1, n2: 1 }, 'one delivery per dedupe key (the first send wins) and per keyless send');
  },
  ['dedupe'],
);

const afterStart = queueCase(
  'queue.dedupe.after-start',
  'once its job has started (or finished) a dedupe key is free: the next send is delivered',
  async (env) => {
    const deliveries = new Deliveries();
    await startWorker(
      env,
      env.queue,
      QUEUE,
      async (job) => {
        deliveries.record(job, 'w');
        const id = (job.payload as { id: string }).id;
        // Sent by the running job itself, the way the engine re-dispatches a run that is executing.
        if (id === 'r1') {
          await env.queue.send(QUEUE, { id: 'r2' }, { dedupeKey: 'r' });
          await sleep(50);
        }
      },
      { concurrency: 2 },
    );
    await env.queue.send(QUEUE, { id: 'r1' }, { dedupeKey: 'r' });
    await waitFor(
      () => deliveries.of('r2').length > 0,
      env.deliveryTimeoutMs,
      'the job sent while its key was running',
      () => deliveries.ids(),
    );
    await env.queue.send(QUEUE, { id: 'r3' }, { dedupeKey: 'r' });
    await waitFor(
      () => deliveries.of('r3').length > 0,
      env.deliveryTimeoutMs,
      'the job sent after its key finished',
      () => deliveries.ids(),
    );
    await sleep(100);
    assert.deepEqual(Object.fromEntries(deliveries.counts()), { r1: 1, r2: 1, r3: 1 });
  },
  ['dedupe'],
);

/** Dedupe keys. */
export const dedupeCases: readonly QueueCase[] = [whileQueued, afterStart];
