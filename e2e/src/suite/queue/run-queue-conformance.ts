import { describe, it } from 'node:test';
import type { Queue } from '@cairn/core/backend';
import { runInFreshNamespace } from '../run-in-fresh-namespace.js';
import { registerSuiteHooks } from '../suite-hooks.js';
import { deliveryCases } from './delivery.js';
import { delayPriorityCases } from './delay-priority.js';
import { dedupeCases } from './dedupe.js';
import { failureCases } from './failures.js';
import { groupCases } from './groups.js';
import type { QueueCase, QueueRequirement } from './queue-case.js';
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
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function selected(cases: readonly QueueCase[], only: readonly string[] | undefined): QueueCase[] {
  if (only === undefined || only.length === 0) return [...cases];
  return cases.filter((c) => only.some((o) => c.id === o || c.id.startsWith(`${o}.`)));
}

/** Runs one case on a fresh namespace; returns a skip reason instead when the queue cannot run it. */
async function runCase(harness: QueueHarness, testCase: QueueCase): Promise<string | undefined> {
  return runInFreshNamespace(
    (namespace) => harness.createQueue(namespace),
    (queue, namespace) => (harness.destroyQueue ? harness.destroyQueue(queue, namespace) : queue.close()),
    async ({ namespace, resource: queue, openPeer, defer }) => {
      const skip = queueSkipReason(harness, queue, testCase.requires);
      if (skip !== undefined) return skip;
      await testCase.run({
        queue,
        namespace,
        harness,
        deliveryTimeoutMs: harness.deliveryTimeoutMs ?? 15_000,
        redeliveryTimeoutMs: harness.redeliveryTimeoutMs ?? 90_000,
        settleMs: harness.settleMs ?? 2_000,
        openPeer: async () => {
          if (!queue.capabilities.distributed) throw new Error(`openPeer() on ${queue.name}, which is not distributed`);
          return openPeer();
        },
        defer,
      });
      return undefined;
    },
  );
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
  describe(`queue conformance: ${harness.name}`, () => {
    const progress = registerSuiteHooks('queue conformance', harness);
    for (const testCase of cases) {
      progress.counts.total += 1;
      it(testCase.name, (t) => progress.runCase(t, () => runCase(harness, testCase)));
    }
  });
}
