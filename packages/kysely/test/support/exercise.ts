import { randomUUID } from 'node:crypto';
import { CairnError } from '@cairn/core';
import type { ScheduleRecord, WorkflowStore } from '@cairn/core/backend';

const T0 = 1_750_000_000_000;

async function expectError(promise: Promise<unknown>): Promise<void> {
  try {
    await promise;
  } catch (error) {
    if (CairnError.is(error)) return;
    throw error;
  }
}

/** Every path of `slots`: a key's first acquire, a refusal that waits, a holder asking again, a grown limit, renew, release, a waiter's grant. */
async function exerciseSlots(store: WorkflowStore): Promise<void> {
  const slots = store.slots;
  if (!slots) throw new Error('the store has no slots');
  const key = `c:${randomUUID()}`;
  const wait = (priority: number) => ({ priority, queuedAt: T0, expiresAt: T0 + 60_000 });
  await slots.acquire({ key, limit: 1, holder: 'a', expiresAt: T0 + 30_000 }, T0);
  await slots.acquire({ key, limit: 1, holder: 'b', expiresAt: T0 + 30_000, wait: wait(1) }, T0);
  await slots.acquire({ key, limit: 1, holder: 'c', expiresAt: T0 + 30_000 }, T0);
  await slots.acquire({ key, limit: 1, holder: 'a', expiresAt: T0 + 40_000, wait: wait(0) }, T0);
  await slots.renew(key, 'a', T0 + 50_000, T0);
  await slots.release(key, 'a', T0);
  await slots.acquire({ key, limit: 2, holder: 'b', expiresAt: T0 + 30_000, wait: wait(1) }, T0);
  await slots.inspect(key, T0);
}

/** Calls every method of the store (and its conflict paths) once, so every query it issues runs. */
export async function exerciseEveryMethod(store: WorkflowStore): Promise<void> {
  const id = randomUUID();
  await store.runs.create({ id, workflow: 'wf3', version: 'v1', input: { x: 1 }, wakeAt: T0 }, T0);
  await store.runs.create({ id: randomUUID(), workflow: 'wf3', version: 'v1', input: 1, idempotencyKey: 'idem' }, T0);
  await store.runs.create({ id: randomUUID(), workflow: 'wf3', version: 'v1', input: 1, idempotencyKey: 'idem' }, T0);
  await expectError(store.runs.create({ id, workflow: 'wf3', version: 'v1', input: 1 }, T0));
  await store.runs.get(id);
  const page = await store.runs.list({ limit: 5 });
  if (page.nextCursor) await store.runs.list({ limit: 5, cursor: page.nextCursor });
  await store.runs.list({ workflow: 'wf7', limit: 5 });
  await store.runs.list({ status: 'waiting', limit: 5 });
  await store.runs.list({ status: ['waiting', 'running'], limit: 5 });
  await store.runs.list({ workflow: 'wf7', status: 'running', limit: 5 });
  await store.runs.list({ createdAfter: T0 + 100, createdBefore: T0 + 200 });
  await store.runs.list({ parentRunId: 'bulk-1', limit: 5 });
  await store.runs.list({ parentRunId: 'bulk-1', status: 'completed', limit: 5 });
  await store.runs.list({ workflow: 'wf3', idempotencyKey: 'idem' });
  await store.runs.findByIdempotencyKey('wf3', 'idem');
  const ended = await store.runs.listEnded({ status: 'completed', updatedBefore: T0 + 50, limit: 5 });
  if (ended.nextCursor) await store.runs.listEnded({ status: 'completed', updatedBefore: T0 + 50, limit: 5, cursor: ended.nextCursor });
  await store.runs.findDue(T0 + 5_000, 10);
  const run = await store.runs.claim(id, 'w', 30_000, T0);
  if (!run) throw new Error('claim failed');
  await store.runs.claim(id, 'other', 30_000, T0);
  await store.runs.renew(id, run.fence, 30_000, T0 + 1);
  // Tags (cairn_0017_run_tags): a run created with tags, a tag write, its replay, and each shape of tag listing.
  await store.runs.create({ id: randomUUID(), workflow: 'wf7', version: 'v1', input: 1, tags: { customer: 'c-7', plan: 'p1' } }, T0);
  await store.runs.setTags?.(id, run.fence, { seq: 0, tags: { customer: 'c-7' } }, T0);
  await store.runs.setTags?.(id, run.fence, { seq: 0, tags: { customer: 'c-7' } }, T0);
  if (store.runs.setTags !== undefined) {
    const tagged = await store.runs.list({ tags: { customer: 'c-7' }, limit: 3 });
    if (tagged.nextCursor) await store.runs.list({ tags: { customer: 'c-7' }, limit: 3, cursor: tagged.nextCursor });
    await store.runs.list({ tags: { customer: 'c-7', plan: 'p1' }, limit: 5 });
    await store.runs.list({ tags: { customer: 'c-7' }, status: 'completed', limit: 5 });
    await store.runs.list({ tags: { customer: 'c-7' }, status: ['completed', 'waiting'], workflow: 'wf7', limit: 5 });
    await store.runs.list({ tags: { plan: 'p2' }, createdAfter: T0 + 100, createdBefore: T0 + 200 });
  }
  await expectError(store.runs.renew(id, run.fence + 5, 30_000, T0 + 1));
  await store.steps.insert(id, run.fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w' }, T0);
  await store.steps.insert(id, run.fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w' }, T0);
  await store.steps.insert(id, run.fence, { key: 'q', name: 'q', kind: 'task', seq: 1, status: 'scheduled', maxAttempts: 3, queued: true }, T0);
  await store.steps.transition(
    id,
    run.fence,
    {
      key: 'a',
      from: { status: ['running'], attempt: 1 },
      to: { status: 'retry_wait', attempt: 2, wakeAt: T0 + 5 },
      endAttempt: { status: 'failed', error: { name: 'E', message: 'm' } },
    },
    T0 + 1,
  );
  await store.steps.transition(
    id,
    run.fence,
    { key: 'a', from: { status: ['retry_wait'], attempt: 2 }, to: { status: 'running', wakeAt: null }, startAttempt: { worker: 'w' } },
    T0 + 2,
  );
  await store.steps.transition(
    id,
    run.fence,
    { key: 'a', from: { status: ['running'], attempt: 2 }, to: { status: 'succeeded', output: 1 }, endAttempt: { status: 'succeeded', output: 1 } },
    T0 + 3,
  );
  await store.steps.transition(
    id,
    null,
    { key: 'q', from: { status: ['scheduled'], attempt: 1 }, to: { status: 'running' }, startAttempt: { worker: 'q' } },
    T0 + 3,
  );
  await store.steps.transition(
    id,
    null,
    {
      key: 'q',
      from: { status: ['running'], attempt: 1 },
      to: { status: 'running', attempt: 1 },
      endAttempt: { status: 'abandoned' },
      startAttempt: { worker: 'q2' },
    },
    T0 + 4,
  );
  await expectError(store.steps.transition(id, run.fence, { key: 'a', from: { status: ['running'], attempt: 9 }, to: { status: 'failed' } }, T0 + 4));
  await expectError(store.steps.insert(id, run.fence + 9, { key: 'z', name: 'z', kind: 'task', seq: 2, status: 'running', maxAttempts: 1, worker: 'w' }, T0));
  await store.steps.load(id);
  await store.state.set(id, run.fence, 'k', { v: 1 }, T0);
  await store.state.set(id, null, 'k', { v: 2 }, T0);
  await store.state.get(id);
  await store.events.deliver(id, 'e', { p: 1 }, T0);
  await store.events.deliver(id, 'e', { p: 2 }, T0);
  await store.events.get(id, 'e', 2);
  await store.events.deliver(id, 'e', { p: 3 }, T0, { idempotencyKey: 'k' });
  await store.events.deliver(id, 'e', { p: 3 }, T0, { idempotencyKey: 'k' });
  await store.runs.wake(id, T0 + 1);
  await store.runs.requestCancel(id, T0 + 1);
  await store.runs.transition(id, run.fence, { from: ['running'], to: 'waiting', wakeAt: T0 + 9 }, T0 + 2);
  await expectError(store.runs.transition(id, run.fence, { from: ['running'], to: 'completed' }, T0 + 2));
  await store.history.list(id);
  await store.versions.upsert('wf3', 'v1', { d: 1 }, T0);
  await store.versions.get('wf3', 'v1');
  await store.versions.list('wf3');
  await store.versions.setStatus('wf3', 'v1', 'retired', T0);
  const schedule: ScheduleRecord = {
    name: `sched-${randomUUID()}`,
    workflow: 'wf3',
    cron: '* * * * *',
    timezone: 'UTC',
    input: null,
    computedInput: false,
    overlap: 'skip',
    catchUp: 'latest',
    catchUpLimit: 10,
    source: 'api',
    paused: false,
    nextTickAt: T0,
    dueAt: T0,
    firing: [],
    bufferedTickAt: null,
    lastRunId: null,
    lastTickAt: null,
    skippedTicks: 0,
    lastSkippedTickAt: null,
    revision: 1,
    createdAt: T0,
    updatedAt: T0,
  };
  const { schedule: created } = await store.schedules.create(schedule);
  await store.schedules.create(schedule);
  await store.schedules.get(schedule.name);
  await store.schedules.list({ limit: 10 });
  await store.schedules.list({ limit: 10, after: schedule.name });
  await store.schedules.findDue(T0, 10);
  await store.schedules.update({ ...created, paused: true, dueAt: null }, created.revision);
  await store.schedules.delete(schedule.name);
  await exerciseSlots(store);
  await store.runs.transition(id, run.fence, { from: ['waiting'], to: 'failed', error: { name: 'E', message: 'm' } }, T0 + 3);
  await store.runs.reopen(id, { fence: run.fence, forget: ['a', 'q'], retry: { at: T0 + 4, previousStatus: 'failed', forgottenSteps: ['a', 'q'] } }, T0 + 4);
  await expectError(store.runs.reopen(id, { fence: run.fence, forget: [], retry: { at: T0 + 4, previousStatus: 'failed', forgottenSteps: [] } }, T0 + 4));
  await store.runs.delete(id, { statuses: ['completed'], updatedBefore: T0 + 5 });
  // Retention's batch: the bulk-loaded completed runs `bulk-2` … `bulk-9` (and the one just deleted, now missing).
  await store.runs.deleteMany?.([id, ...Array.from({ length: 8 }, (_, i) => `bulk-${i + 2}`)], { statuses: ['completed'], updatedBefore: T0 + 1_000_000 });
  await store.runs.delete(id);
}
