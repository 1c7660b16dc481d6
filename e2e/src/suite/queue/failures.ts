import assert from 'node:assert/strict';
import { queueCase, type QueueCase } from './queue-case.js';
import { Deliveries, QUEUE, sleep, startWorker, waitFor } from './support.js';

const throwNotRedelivered = queueCase(
  'queue.failures.no-queue-retry',
  'a job whose handler throws is not delivered again, and the worker keeps going',
  async (env) => {
    const deliveries = new Deliveries();
    await startWorker(
      env,
      env.queue,
      QUEUE,
      async (job) => {
        deliveries.record(job, 'w');
        const payload = job.payload as { id: string; fail?: 'throw' | 'reject' };
        if (payload.fail === 'throw') throw new Error('handler failure (expected by the test)');
        if (payload.fail === 'reject') return Promise.reject(new Error('handler rejection (expected by the test)'));
      },
      { concurrency: 2 },
    );
    await env.queue.send(QUEUE, { id: 'bad', fail: 'throw' });
    await env.queue.send(QUEUE, { id: 'worse', fail: 'reject' });
    await env.queue.send(QUEUE, { id: 'good' });
    await waitFor(
      () => deliveries.of('bad').length > 0 && deliveries.of('worse').length > 0 && deliveries.of('good').length > 0,
      env.deliveryTimeoutMs,
      'the three jobs',
      () => deliveries.ids(),
    );
    // Long enough for any queue-level retry or expiry-based redelivery to show up.
    await sleep(env.settleMs);
    await env.queue.send(QUEUE, { id: 'after' });
    await waitFor(
      () => deliveries.of('after').length > 0,
      env.deliveryTimeoutMs,
      'a job sent after the failures',
      () => deliveries.ids(),
    );
    assert.deepEqual(Object.fromEntries(deliveries.counts()), { bad: 1, worse: 1, good: 1, after: 1 }, 'failed jobs were delivered once');
  },
);

/** Handler failures. */
export const failureCases: readonly QueueCase[] = [throwNotRedelivered];
