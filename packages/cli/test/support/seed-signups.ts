// The signup scenario on a real store: runs of the deployed `signup` build suspended on
// their `confirmed` event, for `cairn check` and `cairn export` to read; and, on request, one run
// that a build with an unguarded new step resumed, so that it failed with NON_DETERMINISM.
import { createEngine, type RunRecord } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { signup } from '../fixtures/signup-deployed.js';
import { signup as unguarded } from '../fixtures/signup-unguarded.js';

const quiet = { warn: () => {}, error: () => {} };

async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting until ${what}`);
}

const waiting = (store: WorkflowStore, id: string) => async () => (await store.runs.get(id))?.status === 'waiting';

/** Starts `count` runs of the deployed build and returns their ids once each waits for its event. */
export async function seedSignups(store: WorkflowStore, count = 5): Promise<string[]> {
  const engine = createEngine({ store, workflows: [signup], logger: quiet });
  await engine.start();
  try {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push((await engine.startRun(signup, { email: ` User${i}@Example.COM ` })).id);
    for (const id of ids) await until(`run ${id} waits for its event`, waiting(store, id));
    return ids;
  } finally {
    await engine.stop({ graceMs: 0 });
  }
}

/**
 * One run of the deployed build, suspended, then resumed by the unguarded build (its event
 * arrives after the deploy): it fails with NON_DETERMINISM. Returns the failed run.
 */
export async function seedDivergedSignup(store: WorkflowStore): Promise<RunRecord> {
  const [id] = await seedSignups(store, 1);
  const engine = createEngine({ store, workflows: [unguarded], logger: quiet });
  await engine.start();
  try {
    await engine.sendEvent(id as string, 'confirmed', { ok: true });
    await until(`run ${id} fails`, async () => (await store.runs.get(id as string))?.status === 'failed');
    return (await store.runs.get(id as string)) as RunRecord;
  } finally {
    await engine.stop({ graceMs: 0 });
  }
}
