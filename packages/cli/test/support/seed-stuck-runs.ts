// Stuck runs as crashed processes leave them, written straight to the store under test with times
// in the past (the CLI judges them against the real clock): one of each kind the doctor reports.
import { uuidv7, type WorkflowStore } from '@cairn/core/backend';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface StuckRuns {
  /** Due an hour ago (its job was lost), never started: `run-not-dispatched`. */
  undispatched: string;
  /** Claimed by a worker that died an hour ago: `lease-expired`. */
  expired: string;
  /** Waits in `ctx.child` for a child that ended half an hour ago without waking it: `parent-not-woken`. */
  parent: string;
  child: string;
  /** Pinned to a version no engine registered: `version-unregistered`. */
  unregistered: string;
  /** Has waited three days for an event, with no timeout and no deadline: `event-wait-unbounded`. */
  forever: string;
}

/** Writes one stuck run of each kind; `now` is the real time the CLI will check at. */
export async function seedStuckRuns(store: WorkflowStore, now = Date.now()): Promise<StuckRuns> {
  const ago = now - HOUR;
  for (const workflow of ['order', 'shipment', 'approval']) await store.versions.upsert(workflow, 'v1', {}, now - 2 * HOUR);
  await store.versions.upsert('invoice', 'v4', {}, now - 2 * HOUR);
  const create = async (workflow: string, at: number, extra: { version?: string; wakeAt?: number; parent?: { runId: string; stepKey: string } } = {}) =>
    (await store.runs.create({ id: uuidv7(at), workflow, version: extra.version ?? 'v1', input: null, ...extra }, at)).run.id;

  const undispatched = await create('order', ago, { wakeAt: ago });

  const expired = await create('order', ago, { wakeAt: ago });
  await store.runs.claim(expired, 'worker-7 (died)', 30_000, ago);

  const parent = await create('order', ago, { wakeAt: ago });
  const child = uuidv7(ago);
  const parentFence = (await store.runs.claim(parent, 'worker-1', 30_000, ago))!.fence;
  await store.steps.insert(
    parent,
    parentFence,
    { key: 'ship', name: 'ship', kind: 'child', seq: 0, status: 'waiting', maxAttempts: 1, childRunId: child },
    ago,
  );
  await store.runs.create({ id: child, workflow: 'shipment', version: 'v1', input: null, parent: { runId: parent, stepKey: 'ship' }, wakeAt: ago }, ago);
  await store.runs.transition(parent, parentFence, { from: ['running'], to: 'waiting', wakeAt: now + HOUR }, ago);
  const childFence = (await store.runs.claim(child, 'worker-2', 30_000, ago))!.fence;
  await store.runs.transition(child, childFence, { from: ['running'], to: 'completed', output: 'shipped' }, now - 30 * MINUTE);

  const unregistered = await create('invoice', ago, { version: 'v3' });

  const since = now - 3 * 24 * HOUR;
  const forever = await create('approval', since, { wakeAt: since });
  const foreverFence = (await store.runs.claim(forever, 'worker-3', 30_000, since))!.fence;
  await store.steps.insert(
    forever,
    foreverFence,
    { key: 'event:manager-ok', name: 'event:manager-ok', kind: 'event', seq: 0, status: 'waiting', maxAttempts: 1 },
    since,
  );
  await store.runs.transition(forever, foreverFence, { from: ['running'], to: 'waiting' }, since);

  return { undispatched, expired, parent, child, unregistered, forever };
}
