import assert from 'node:assert/strict';
import type { GroupConcurrency, Job, JobGroup, Queue } from '@cairn/core';
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
    // Sent group by group: the first ready jobs all share one group, so a worker that ignores the
    // caps takes more of it than its cap at its first fetch, whatever the timing (interleaved
    // groups let such a worker pass when its jobs happened to end in a lucky order).
    for (const group of GROUPS) {
      for (let i = 0; i < perGroup; i++) {
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

/** Job groups and per-group caps. */
export const groupCases: readonly QueueCase[] = [capsHold];
