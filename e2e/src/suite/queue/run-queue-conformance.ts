import { after, before, describe, it } from 'node:test';
import type { Queue } from '@cairn/core';
import { newNamespace } from '../run-conformance.js';
import { deliveryCases } from './delivery.js';
import { delayPriorityCases } from './delay-priority.js';
import { dedupeCases } from './dedupe.js';
import { failureCases } from './failures.js';
import { groupCases } from './groups.js';
import type { QueueCase, QueueCaseEnv, QueueRequirement } from './queue-case.js';
import type { QueueConformanceOptions, QueueHarness } from './queue-harness.js';
import { workerDeathCases } from './worker-death.js';

/** Every queue case, in registration order. */
export const allQueueCases: readonly QueueCase[] = [
  ...deliveryCases,
  ...delayPriorityCases,
  ...dedupeCases,
  ...groupCases,
  ...failureCases,
  ...workerDeathCases,
];

/** Why `queue` (of `harness`) cannot run a case with `requires`, or undefined when it can. */
export function queueSkipReason(harness: QueueHarness, queue: Queue, requires: readonly QueueRequirement[]): string | undefined {
  for (const requirement of requires) {
    if (requirement === 'childWorker') {
      if (harness.childWorker === undefined) return 'needs a worker in a child process to kill (harness.childWorker absent)';
      continue;
    }
    if (requirement === 'distributed' && !queue.capabilities.distributed) {
      return `${queue.name} is in-process (capabilities.distributed false): its jobs die with the process, so no other worker can receive them again`;
    }
    if (!queue.capabilities[requirement]) return `${queue.name} lacks capabilities.${requirement}`;
  }
  return undefined;
}

function onlyFromEnvironment(): string[] | undefined {
  const raw = process.env.CAIRN_CONFORMANCE_ONLY;
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

function selected(cases: readonly QueueCase[], only: readonly string[] | undefined): QueueCase[] {
  if (only === undefined || only.length === 0) return [...cases];
  return cases.filter((c) => only.some((o) => c.id === o || c.id.startsWith(`${o}.`)));
}

function sourceOf(harness: QueueHarness): string {
  try {
    return (typeof harness.source === 'function' ? harness.source() : harness.source) ?? 'source not stated';
  } catch (error) {
    return `source unknown (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Runs one case on a fresh namespace; returns a skip reason instead when the queue cannot run it. */
async function runCase(harness: QueueHarness, testCase: QueueCase): Promise<string | undefined> {
  const namespace = newNamespace();
  const queue = await harness.createQueue(namespace);
  const peers: Queue[] = [];
  const deferred: Array<() => Promise<void> | void> = [];
  const env: QueueCaseEnv = {
    queue,
    namespace,
    harness,
    deliveryTimeoutMs: harness.deliveryTimeoutMs ?? 15_000,
    redeliveryTimeoutMs: harness.redeliveryTimeoutMs ?? 90_000,
    settleMs: harness.settleMs ?? 2_000,
    openPeer: async () => {
      if (!queue.capabilities.distributed) throw new Error(`openPeer() on ${queue.name}, which is not distributed`);
      const peer = await harness.createQueue(namespace);
      peers.push(peer);
      return peer;
    },
    defer: (fn) => void deferred.push(fn),
  };
  let failure: { error: unknown } | undefined;
  let skip: string | undefined;
  try {
    skip = queueSkipReason(harness, queue, testCase.requires);
    if (skip === undefined) await testCase.run(env);
  } catch (error) {
    failure = { error };
  }
  // Cleanup always runs, and a cleanup error never hides the case's own failure.
  const cleanups = [
    ...deferred.reverse(),
    ...peers.map((p) => () => p.close()),
    () => (harness.destroyQueue ? harness.destroyQueue(queue, namespace) : queue.close()),
  ];
  for (const cleanup of cleanups) {
    try {
      await cleanup();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
  return skip;
}

/**
 * Registers the queue contract cases for `harness` as `node:test` suites: delivery exactly once in
 * the normal case, JSON round trips, delays, priority order, dedupe keys, group caps under racing
 * workers, no queue-level retry of a throwing handler, redelivery after a worker process is killed,
 * and shutdown. Every case gets a fresh namespace. A case the queue cannot run (by its
 * `capabilities`, or a harness without `childWorker`) is reported as skipped with the reason.
 */
export function runQueueConformance(harness: QueueHarness, options: QueueConformanceOptions = {}): void {
  const cases = selected(allQueueCases, options.only ?? onlyFromEnvironment());
  const counts = { total: cases.length, passed: 0, skipped: 0 };
  let unavailable: string | undefined;

  describe(`queue conformance: ${harness.name}`, () => {
    before(async () => {
      const result = await harness.setup?.();
      if (result && typeof result.skip === 'string') unavailable = result.skip;
    });

    after(async (context) => {
      try {
        await harness.teardown?.();
      } finally {
        const failed = counts.total - counts.passed - counts.skipped;
        const source = unavailable === undefined ? sourceOf(harness) : `unavailable: ${unavailable}`;
        const line = `queue conformance ${harness.name} (${source}): ${counts.passed} passed, ${failed} failed, ${counts.skipped} skipped`;
        if ('diagnostic' in context && typeof context.diagnostic === 'function') context.diagnostic(line);
        else console.log(`# ${line}`);
      }
    });

    for (const testCase of cases) {
      it(testCase.name, async (t) => {
        if (unavailable !== undefined) {
          counts.skipped += 1;
          t.skip(`${harness.name} unavailable: ${unavailable}`);
          return;
        }
        const skip = await runCase(harness, testCase);
        if (skip !== undefined) {
          counts.skipped += 1;
          t.skip(skip);
          return;
        }
        counts.passed += 1;
      });
    }
  });
}
