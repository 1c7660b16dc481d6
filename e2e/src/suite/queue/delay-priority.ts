import assert from 'node:assert/strict';
import { CairnError } from '@cairn/core';
import { queueCase, type QueueCase } from './queue-case.js';
import { Deliveries, QUEUE, sleep, startWorker, waitFor } from './support.js';

const DELAY_MS = 1200;
// Date.now() has a resolution of 1 ms on each side of the measurement.
const CLOCK_SLACK_MS = 2;

const delayHonoured = queueCase(
  'queue.delay.honoured',
  'a delayed job is not delivered before its delay; jobs without one are not held behind it',
  async (env) => {
    const deliveries = new Deliveries();
    await startWorker(env, env.queue, QUEUE, async (job) => void deliveries.record(job, 'w'), { concurrency: 2 });
    const sentAt = Date.now();
    await env.queue.send(QUEUE, { id: 'late' }, { delayMs: DELAY_MS });
    await env.queue.send(QUEUE, { id: 'short' }, { delayMs: 200 });
    await env.queue.send(QUEUE, { id: 'now' }, { delayMs: 0 });
    await waitFor(
      () => deliveries.of('late').length > 0,
      DELAY_MS + env.deliveryTimeoutMs,
      'the delayed job',
      () => deliveries.ids(),
    );
    const at = (id: string) => deliveries.of(id)[0]!.at;
    assert.ok(at('late') - sentAt >= DELAY_MS - CLOCK_SLACK_MS, `delivered ${at('late') - sentAt} ms after send, before its ${DELAY_MS} ms delay`);
    assert.ok(at('short') - sentAt >= 200 - CLOCK_SLACK_MS, `the 200 ms job came after ${at('short') - sentAt} ms`);
    assert.ok(at('now') < at('late'), 'the undelayed job was delivered before the delayed one');
    assert.ok(at('short') <= at('late'), 'the shorter delay was delivered first');
    await sleep(100);
    assert.deepEqual([...deliveries.counts().values()], [1, 1, 1], `each job delivered once: ${deliveries.ids()}`);
  },
  ['delay'],
);

const DAY_MS = 86_400_000;

const delayLong = queueCase(
  'queue.delay.long',
  'delays beyond what a Node.js timer holds (30 days, 100 years) are honoured, not cut short; longer ones are refused with INVALID_INPUT',
  async (env) => {
    const deliveries = new Deliveries();
    await startWorker(env, env.queue, QUEUE, async (job) => void deliveries.record(job, 'w'), { concurrency: 2 });
    // 2^31-1 ms is about 24.8 days: a timer armed with more fires after 1 ms instead.
    await env.queue.send(QUEUE, { id: 'month' }, { delayMs: 30 * DAY_MS });
    await env.queue.send(QUEUE, { id: 'century' }, { delayMs: 36_525 * DAY_MS });
    await env.queue.send(QUEUE, { id: 'now' }, { delayMs: 0 });
    await waitFor(
      () => deliveries.of('now').length > 0,
      env.deliveryTimeoutMs,
      'the undelayed job',
      () => deliveries.ids(),
    );
    // Give a cut-short delay every chance to show: a few polls of a polling broker.
    await sleep(env.settleMs + 1_000);
    assert.equal(deliveries.ids(), '["now"]', 'only the undelayed job was delivered');
    for (const delayMs of [36_525 * DAY_MS + 1, 1e20, Number.NaN, -1]) {
      await assert.rejects(env.queue.send(QUEUE, { id: 'never' }, { delayMs }), (e: unknown) => CairnError.is(e, 'INVALID_INPUT'), `delayMs ${delayMs}`);
    }
  },
  ['delay'],
);

const priorityOrder = queueCase(
  'queue.priority.order',
  'among ready jobs a higher priority runs sooner, and equal priorities run in send order',
  async (env) => {
    const priorities = [0, 3, -2, 10, 3, 0, -2, 7, 1000, -1000];
    for (let i = 0; i < priorities.length; i++) await env.queue.send(QUEUE, { id: i, p: priorities[i]! }, { priority: priorities[i]! });
    // Nothing consumes yet, so every job is ready when the single-slot worker starts.
    await sleep(100);
    const order: number[] = [];
    await startWorker(env, env.queue, QUEUE, async (job) => void order.push((job.payload as { id: number }).id), { concurrency: 1 });
    await waitFor(
      () => order.length >= priorities.length,
      env.deliveryTimeoutMs,
      'every prioritized job',
      () => JSON.stringify(order),
    );
    const expected = priorities
      .map((p, id) => ({ p, id }))
      .sort((a, b) => b.p - a.p || a.id - b.id)
      .map((j) => j.id);
    assert.deepEqual(order, expected, 'delivery order: priority descending, then send order');
  },
  ['priority'],
);

/** Delays and priorities. */
export const delayPriorityCases: readonly QueueCase[] = [delayHonoured, delayLong, priorityOrder];
