import assert from 'node:assert/strict';
import { createEngine, defineWorkflow, isTerminalRunStatus, type Engine, type RunRecord } from '@cairn/core';
import { countingStore, RESULT_RECHECK_MS, RESULT_TOPIC, type CountingStore, type Clock } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';

// Generous bounds for things to happen, not timing claims (those are in the bench).
const BOUND_MS = 10_000;
// The recovery loop set far beyond every case: only result()'s own reads and signals count.
const NO_RECOVERY_MS = 600_000;
// How long a waiter is left alone to show whether it polls: today's polling (10 ms doubling)
// reads four or five times in it.
const IDLE_MS = 300;
const MANY = 40;

const quiet = { warn: () => {}, error: () => {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Waits for the event `go`, then returns 2n + the event's payload: a run that ends only when told.
const told = defineWorkflow('pushed-results', async (ctx, n: number) => 2 * n + (await ctx.waitForEvent<number>('go')));

/**
 * Two "processes": a worker engine executing the runs on the store under test, and a waiter engine
 * (never started: it only calls result()) on a second instance of the store with its own
 * connection, whose calls are counted. A backend whose instances may not race shares one instance.
 */
async function waiterAndWorker(env: CaseEnv, options: { waiterClock?: Clock; workerSignals?: boolean } = {}) {
  const peer = env.harness.capabilities?.multiProcess === false ? env.store : await env.openPeer();
  const counted = countingStore(peer);
  const waiter = createEngine({
    store: counted,
    workflows: [told],
    recoveryIntervalMs: NO_RECOVERY_MS,
    logger: quiet,
    ...(options.waiterClock ? { clock: options.waiterClock } : {}),
  });
  // Without signals the worker sends no completion signal: every one is lost.
  const workerStore = options.workerSignals === false ? countingStore(env.store, { without: ['signals'] }) : env.store;
  const worker = createEngine({ store: workerStore, workflows: [told], recoveryIntervalMs: NO_RECOVERY_MS, logger: quiet });
  env.defer(() => waiter.stop());
  env.defer(() => worker.stop());
  await worker.start();
  return { waiter, worker, counted };
}

async function until(what: string, predicate: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await sleep(5);
  }
  assert.fail(`${what}: not within ${BOUND_MS} ms`);
}

/** Reads of `runId` by the waiter that found it not ended yet: the first is the waiter's own look; every other is a poll or a hint. */
function readsOfUnended(counted: CountingStore, runId: string): number {
  return counted.calls.filter(
    (c) =>
      c.method === 'runs.get' &&
      c.runId === runId &&
      c.outcome?.ok === true &&
      !isTerminalRunStatus((c.outcome.value as RunRecord | undefined)?.status ?? 'completed'),
  ).length;
}

/** Starts `count` runs on the worker and waits until each waits for its event. */
async function startWaiting(env: CaseEnv, worker: Engine, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await worker.startRun(told, i)).id);
  await until('every run waits for its event', async () => {
    for (const id of ids) {
      if ((await env.store.runs.get(id))?.status !== 'waiting') return false;
      if (!(await env.store.steps.load(id)).some((s) => s.key === 'event:go')) return false;
    }
    return true;
  });
  return ids;
}

/** result() of each run, started now; settled ones are noted, so a case can tell a waiter that resolved early. */
function waitFor(waiter: Engine, ids: readonly string[]) {
  const settled = new Set<string>();
  const results = ids.map((id) => {
    const p = waiter.result<number>(id, { timeout: BOUND_MS });
    void p.then(
      () => settled.add(id),
      () => settled.add(id),
    );
    return p;
  });
  return { results, settled };
}

/**
 * `result()` of a run that executes in another process. On a store with signals it resolves on the
 * completion signal and polls only while signals are unhealthy, with a slow re-read as the safety
 * net of a lost signal (`RESULT_RECHECK_MS`); a signal is a hint, so the run is always read before
 * `result()` resolves. On a store without signals it polls.
 */
export const pushedResultsGroup: CaseGroup = caseGroup('engine.pushed-results', 'engine: result() of a run executing in another process', [
  conformanceCase(
    'result() of a run executing in another process resolves with its outcome, and makes no polling read while the store signals',
    async (env) => {
      const { waiter, worker, counted } = await waiterAndWorker(env);
      const ids = await startWaiting(env, worker, 3);
      const { results, settled } = waitFor(waiter, ids);
      await until('each waiter read its run once', () => ids.every((id) => readsOfUnended(counted, id) >= 1));
      await sleep(IDLE_MS);
      assert.equal(settled.size, 0, 'no result() resolves before its run ends');
      const idle = ids.map((id) => readsOfUnended(counted, id));
      if (env.store.signals)
        assert.deepEqual(idle, [1, 1, 1], `reads of each unended run while signals are healthy (1 = the waiter's first look; more = polling)`);
      // A store without signals is polled: that is how its waiters learn.
      else
        assert.ok(
          idle.every((n) => n > 1),
          `a store without signals is polled: ${idle.join(', ')} reads`,
        );
      for (const id of ids) await worker.sendEvent(id, 'go', 1);
      assert.deepEqual(await Promise.all(results), [1, 3, 5]);
      if (env.store.signals)
        assert.deepEqual(
          ids.map((id) => readsOfUnended(counted, id)),
          [1, 1, 1],
          'no polling read up to the end either',
        );
    },
  ),

  conformanceCase('a lost completion signal: result() still resolves, on its periodic re-read, with the right outcome', async (env) => {
    const clock = new ManualClock({ start: Date.now() });
    // The worker has no signals: the completion signal is lost as if its process died after the write.
    const { waiter, worker, counted } = await waiterAndWorker(env, { waiterClock: clock, workerSignals: false });
    const [id] = await startWaiting(env, worker, 1);
    const { results, settled } = waitFor(waiter, [id!]);
    await until('the waiter read the run once', () => readsOfUnended(counted, id!) >= 1);
    await worker.sendEvent(id!, 'go', 10);
    await until('the run completed', async () => (await env.store.runs.get(id!))?.status === 'completed');
    await sleep(IDLE_MS);
    if (env.store.signals) {
      // Signals are healthy and none came: no read yet (the waiter's clock has not moved).
      assert.equal(settled.size, 0, 'nothing told the waiter yet');
      assert.equal(counted.count('runs.get', id), 1, 'no read while signals are healthy and silent');
    }
    await clock.advance(RESULT_RECHECK_MS);
    assert.equal(await results[0], 10);
  }),

  conformanceCase('a duplicated or stray completion signal never resolves result() before the run ends', async (env) => {
    const { waiter, worker, counted } = await waiterAndWorker(env);
    const [id] = await startWaiting(env, worker, 1);
    const { results, settled } = waitFor(waiter, [id!]);
    await until('the waiter read the run once', () => readsOfUnended(counted, id!) >= 1);
    const signals = env.store.signals;
    if (signals) {
      // Signals for a run that has not ended, twice, and messages that name no run of ours.
      await signals.notify(RESULT_TOPIC, id!);
      await signals.notify(RESULT_TOPIC, id!);
      await signals.notify(RESULT_TOPIC, 'not a run id');
      await signals.notify(RESULT_TOPIC, '');
      await until('the hint made the waiter look again', () => readsOfUnended(counted, id!) >= 2);
      await sleep(50);
      assert.equal(settled.size, 0, 'a hint is not an outcome: the run was read, still waiting');
    }
    await worker.sendEvent(id!, 'go', 7);
    assert.equal(await results[0], 7);
  }),

  conformanceCase('result() resolves correctly when the listening connection is killed and comes back (the listener reports both)', async (env) => {
    const drop = env.harness.dropSignalConnections;
    const signals = env.store.signals;
    if (!drop || !signals) return;
    // A listener of the store under test: told of the loss (onLost) and of the return (no message).
    let lost = 0;
    let back = 0;
    const stopProbe = await signals.listen(
      'pushed-results-probe',
      (message) => void (message === undefined && back++),
      () => void lost++,
    );
    env.defer(stopProbe);
    const { waiter, worker, counted } = await waiterAndWorker(env);
    const ids = await startWaiting(env, worker, 3);
    const { results } = waitFor(waiter, ids);
    await until('each waiter read its run once', () => ids.every((id) => readsOfUnended(counted, id) >= 1));
    const dropped = await drop(env.store, env.namespace);
    assert.ok(dropped >= 1, `the harness ended ${dropped} listening connections`);
    // At once, while the listener is down: this completion signal is lost.
    await worker.sendEvent(ids[0]!, 'go', 100);
    assert.equal(await results[0], 100);
    await until('the listener reports the loss', () => lost >= 1);
    await until('the listener reports its return', () => back >= 1);
    // Later, once the listener is back.
    await sleep(IDLE_MS);
    await worker.sendEvent(ids[1]!, 'go', 200);
    assert.equal(await results[1], 202);
    // And a waiter that starts after the outage.
    await worker.sendEvent(ids[2]!, 'go', 300);
    assert.equal(await results[2], 304);
    assert.equal(await waiter.result(ids[2]!), 304);
  }),

  conformanceCase(`${MANY} concurrent result() calls of runs executing in another process each resolve with their own outcome`, async (env) => {
    const { waiter, worker, counted } = await waiterAndWorker(env);
    const ids = await startWaiting(env, worker, MANY);
    const { results } = waitFor(waiter, ids);
    await until('each waiter read its run once', () => ids.every((id) => readsOfUnended(counted, id) >= 1));
    await Promise.all(ids.map((id, i) => worker.sendEvent(id, 'go', 1000 * i)));
    assert.deepEqual(
      await Promise.all(results),
      ids.map((_, i) => 2 * i + 1000 * i),
    );
    if (env.store.signals) {
      const polls = ids.map((id) => readsOfUnended(counted, id) - 1).reduce((a, b) => a + b, 0);
      assert.equal(polls, 0, 'polling reads across the waiters while signals are healthy');
    }
  }),
]);
