import assert from 'node:assert/strict';
import { createEngine, defineWorkflow, type Engine, type AnyWorkflowDefinition } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';

// Generous bounds, not timing claims: each is far under the 30 s start grace period, and on a
// store with signals the recovery loop is set far beyond it, so only a signal delivers in time.
const BOUND_MS = 10_000;
const NO_RECOVERY_MS = 600_000;
// Stores without signals are polled: the recovery loop at its default interval is the poll.
const POLL_MS = 2_000;

const quiet = { warn: () => {}, error: () => {} };

/**
 * Two "processes" on one store, with no distributed queue: an API engine started without workers
 * on one store instance, a worker engine (its own local queue) on another. A backend whose
 * instances may not race (`multiProcess: false`: the memory store, FerretDB) shares one instance
 * between the two engines; each still has its own local queue, so only the store connects them.
 */
async function apiAndWorker(
  env: CaseEnv,
  workflows: readonly AnyWorkflowDefinition[],
  timings: { leaseMs?: number } = {},
): Promise<{ api: Engine; worker: Engine; store: WorkflowStore }> {
  // Closed by the suite after the deferred stops below.
  const peer = env.harness.capabilities?.multiProcess === false ? env.store : await env.openPeer();
  const recoveryIntervalMs = env.store.signals ? NO_RECOVERY_MS : POLL_MS;
  const api = createEngine({ store: peer, workflows, recoveryIntervalMs, timings, logger: quiet });
  const worker = createEngine({ store: env.store, workflows, recoveryIntervalMs, timings, logger: quiet });
  env.defer(() => api.stop());
  env.defer(() => worker.stop());
  await worker.start();
  await api.start({ workers: false });
  return { api, worker, store: env.store };
}

async function until(what: string, predicate: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`${what}: not within ${BOUND_MS} ms`);
}

/**
 * Engine scenarios: without a distributed queue the store is the queue between processes. A run
 * started, sent an event or cancelled by a process without workers reaches a worker process
 * promptly — through the store's signals, or its polling where it has none — never only after the
 * start grace period.
 */
export const storeQueueGroup: CaseGroup = caseGroup('engine.store-queue', 'engine: the store is the queue between processes', [
  conformanceCase('a run started by a process without workers starts on a worker process promptly', async (env) => {
    const wf = defineWorkflow('store-queue-start', async (ctx, n: number) => ctx.step('double', () => n * 2));
    const { api } = await apiAndWorker(env, [wf]);
    const handles = [];
    for (let i = 0; i < 3; i++) handles.push(await api.startRun(wf, i));
    for (const [i, handle] of handles.entries()) assert.equal(await api.result(handle.id, { timeout: BOUND_MS }), i * 2);
  }),

  conformanceCase('an event and a cancel sent by a process without workers reach the run on a worker process promptly', async (env) => {
    const wf = defineWorkflow('store-queue-event', async (ctx) => {
      const first = await ctx.waitForEvent('go');
      await ctx.setState('got', first);
      await ctx.waitForEvent('never');
    });
    const { api, store } = await apiAndWorker(env, [wf]);
    const handle = await api.startRun(wf, null);
    const waitsOn = (key: string) => async () =>
      (await store.runs.get(handle.id))?.status === 'waiting' && (await store.steps.load(handle.id)).some((s) => s.key === key);
    await until('the run waits for the event', waitsOn('event:go'));
    await api.sendEvent(handle.id, 'go', 'now');
    await until('the event reaches the run', waitsOn('event:never'));
    assert.deepEqual(await store.state.get(handle.id), { got: 'now' });
    await api.cancel(handle.id, { reason: 'done waiting' });
    await until('the cancel reaches the run', async () => (await store.runs.get(handle.id))?.status === 'cancelled');
    await rejectsWithCode(api.result(handle.id), 'RUN_CANCELLED');
  }),

  conformanceCase('a cancel sent by a process without workers aborts a body running on a worker process promptly', async (env) => {
    let seen: unknown;
    const wf = defineWorkflow('store-queue-cancel-running', async (ctx) => {
      await ctx.step(
        'wait',
        (step) => new Promise((_resolve, reject) => step.signal.addEventListener('abort', () => reject((seen = step.signal.reason)), { once: true })),
      );
    });
    // With signals the worker executing the run hears the cancel at once: its lease renewal (a
    // third of the lease) is set far beyond the bound. Without, the renewal is how it learns.
    const { api, store } = await apiAndWorker(env, [wf], { leaseMs: env.store.signals ? 3 * NO_RECOVERY_MS : 3 * POLL_MS });
    const handle = await api.startRun(wf, null);
    await until('the body runs on the worker', async () => (await store.steps.load(handle.id)).some((s) => s.key === 'wait'));
    await api.cancel(handle.id, { reason: 'stop now' });
    await until('the body sees its signal abort', async () => seen !== undefined);
    assert.match(String((seen as Error).message), /stop now/);
    await until('the run ends cancelled', async () => (await store.runs.get(handle.id))?.status === 'cancelled');
  }),
]);
