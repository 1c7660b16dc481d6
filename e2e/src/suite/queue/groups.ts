import assert from 'node:assert/strict';
import type { GroupConcurrency, Job, JobGroup, Queue } from '@cairn/core/backend';
import { queueCase, type QueueCase } from './queue-case.js';
import { Deliveries, QUEUE, sleep, startWorker, waitFor } from './support.js';

const CAPS = { default: 2, tiers: { gold: 3, solo: 1 } } satisfies GroupConcurrency;

function capOf(group: JobGroup): number {
  return (group.tier === undefined ? undefined : (CAPS.tiers as Record<string, number>)[group.tier]) ?? CAPS.default;
}

const GROUPS: (JobGroup | undefined)[] = [
  { id: 'plain' },
  { id: 'golden', tier: 'gold' },
  { id: 'single', tier: 'solo' },
  { id: 'other-tier', tier: 'no-such-tier' },
  undefined,
];

const capsHold = queueCase(
  'queue.groups.caps',
  'no worker ever runs more jobs of one group than its tier allows, under several racing workers',
  async (env) => {
    const queues: Queue[] = [env.queue];
    if (env.queue.capabilities.distributed) queues.push(await env.openPeer());
    const perGroup = 8;
    let n = 0;
    // Every job is ready before any worker starts, so the workers race for all of them at once.
    for (let i = 0; i < perGroup; i++) {
      for (const group of GROUPS) {
        const id = n++;
        await queues[id % queues.length]!.send(QUEUE, { id, group: group === undefined ? null : { ...group } }, group === undefined ? {} : { group });
      }
    }
    const deliveries = new Deliveries();
    const violations: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const worker = (name: string) => {
      const inGroup = new Map<string, number>();
      return async (job: Job) => {
        deliveries.record(job, name);
        const sent = (job.payload as { group: JobGroup | null }).group;
        assert.deepEqual(job.group ?? null, sent, `job ${JSON.stringify(job.payload)} carries the group it was sent with`);
        running++;
        maxRunning = Math.max(maxRunning, running);
        const group = job.group;
        // The invariant is checked at every job start, on the worker that starts it.
        if (group !== undefined) {
          const now = (inGroup.get(group.id) ?? 0) + 1;
          inGroup.set(group.id, now);
          if (now > capOf(group)) violations.push(`${name}: ${now} jobs of group ${group.id} (cap ${capOf(group)})`);
        }
        await sleep(15 + Math.floor(Math.random() * 25));
        if (group !== undefined) inGroup.set(group.id, inGroup.get(group.id)! - 1);
        running--;
      };
    };
    let w = 0;
    for (const queue of queues) {
      for (let k = 0; k < 2; k++) {
        const name = `w${w++}`;
        await startWorker(env, queue, QUEUE, worker(name), { concurrency: 4, groupConcurrency: CAPS });
      }
    }
    const total = perGroup * GROUPS.length;
    await waitFor(
      () => deliveries.all.length >= total,
      env.deliveryTimeoutMs * 2,
      `${total} grouped jobs`,
      () => `${deliveries.all.length} delivered`,
    );
    await sleep(200);
    assert.deepEqual(violations, [], 'group caps held at every job start');
    const counts = deliveries.counts();
    for (let id = 0; id < total; id++) assert.equal(counts.get(id), 1, `job ${id} delivered ${counts.get(id) ?? 0} times`);
    assert.ok(maxRunning > 1, 'jobs ran concurrently (the case exercised the caps)');
  },
  ['groups'],
);

const capWithNothingElseReady = queueCase(
  'queue.groups.cap-alone',
  'a group at its cap gets no more jobs even when its jobs are the only ones ready',
  async (env) => {
    const single: JobGroup = { id: 'single', tier: 'solo' };
    const jobs = 5;
    // Only one group has ready jobs, so a worker that ignored the caps would take several at its
    // first fetch: the case fails such a queue whatever the timing (the racing case above needs
    // an unlucky order of completions to see it).
    for (let id = 0; id < jobs; id++) await env.queue.send(QUEUE, { id }, { group: single });
    const deliveries = new Deliveries();
    let running = 0;
    let maxRunning = 0;
    await startWorker(
      env,
      env.queue,
      QUEUE,
      async (job) => {
        deliveries.record(job, 'w0');
        running++;
        maxRunning = Math.max(maxRunning, running);
        await sleep(10);
        running--;
      },
      { concurrency: 4, groupConcurrency: CAPS },
    );
    await waitFor(
      () => deliveries.all.length >= jobs,
      env.deliveryTimeoutMs * 2,
      `${jobs} jobs of one group`,
      () => `${deliveries.all.length} delivered`,
    );
    assert.equal(maxRunning, capOf(single), `at most ${capOf(single)} job of group ${single.id} at once, with 4 free slots`);
    const counts = deliveries.counts();
    for (let id = 0; id < jobs; id++) assert.equal(counts.get(id), 1, `job ${id} delivered ${counts.get(id) ?? 0} times`);
  },
  ['groups'],
);

/** Job groups and per-group caps. */
export const groupCases: readonly QueueCase[] = [capsHold, capWithNothingElseReady];
