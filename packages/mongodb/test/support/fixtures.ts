import { randomUUID } from 'node:crypto';
import type { RunRecord } from '@cairn/core';
import type { NewStep, WorkflowStore } from '@cairn/core/backend';

/** A new run id (time-sortable enough for tests). */
export const newId = (): string => `${Date.now().toString(36)}-${randomUUID()}`;

/** Creates a pending run. */
export async function createRun(
  store: WorkflowStore,
  now = 1000,
  extra: { workflow?: string; wakeAt?: number; idempotencyKey?: string } = {},
): Promise<RunRecord> {
  const { run } = await store.runs.create({ id: newId(), workflow: extra.workflow ?? 'wf', version: 'v1', input: { n: 1 }, ...extra }, now);
  return run;
}

/** Creates and claims a run; returns it with its fence. */
export async function claimedRun(store: WorkflowStore, now = 1000, owner = 'owner-a'): Promise<RunRecord> {
  const run = await createRun(store, now);
  const claimed = await store.runs.claim(run.id, owner, 30_000, now + 1);
  if (!claimed) throw new Error('claim failed');
  return claimed;
}

/** A running task step, attempt 1. */
export const taskStep = (key: string, seq: number, extra: Partial<NewStep> = {}): NewStep => ({
  key,
  name: key.split('#')[0] ?? key,
  kind: 'task',
  seq,
  status: 'running',
  maxAttempts: 3,
  worker: 'worker-1',
  ...extra,
});
