import type { NewRun, WorkflowStore } from '@cairn/core/backend';

export const T0 = 1_760_000_000_000;

let counter = 0;
/** A new run description with a unique id. */
export function newRun(overrides: Partial<NewRun> = {}): NewRun {
  counter += 1;
  return { id: `run-${T0.toString(36)}-${counter}`, workflow: 'wf', version: 'v1', input: { n: counter }, ...overrides };
}

/** Creates a run and claims it; answers the run id and its fence. */
export async function claimed(store: WorkflowStore, overrides: Partial<NewRun> = {}, owner = 'w1'): Promise<{ id: string; fence: number }> {
  const { run } = await store.runs.create(newRun(overrides), T0);
  const got = await store.runs.claim(run.id, owner, 60_000, T0 + 1);
  if (!got) throw new Error('claim failed');
  return { id: run.id, fence: got.fence };
}
