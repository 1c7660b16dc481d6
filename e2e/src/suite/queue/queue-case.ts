import type { Queue, QueueCapabilities } from '@cairn/core/backend';
import type { QueueHarness } from './queue-harness.js';

/** What a queue case may need beyond the contract; a missing one skips the case by name. */
export type QueueRequirement = keyof Omit<QueueCapabilities, 'distributed'> | 'distributed' | 'childWorker';

/** Everything one case gets: its namespace, its first queue, peers and a cleanup stack. */
export interface QueueCaseEnv {
  /** The queue under test, fresh and empty, in `namespace`. */
  queue: Queue;
  namespace: string;
  harness: QueueHarness;
  /** `harness.deliveryTimeoutMs` with its default. */
  deliveryTimeoutMs: number;
  /** `harness.redeliveryTimeoutMs` with its default. */
  redeliveryTimeoutMs: number;
  /** `harness.settleMs` with its default. */
  settleMs: number;
  /**
   * Another instance on the same namespace, as a second process would open it; only for
   * distributed queues (an in-process queue opened twice is two unrelated queues). Closed when
   * the case ends.
   */
  openPeer(): Promise<Queue>;
  /** Runs `fn` when the case ends, before the queues are closed (last registered runs first). */
  defer(fn: () => Promise<void> | void): void;
}

/** One queue conformance case. */
export interface QueueCase {
  /** Dotted id, e.g. `queue.delivery.exactly-once`; `only` selects by prefix. */
  id: string;
  name: string;
  requires: QueueRequirement[];
  run(env: QueueCaseEnv): Promise<void>;
}

/** Declares one case. */
export function queueCase(id: string, name: string, run: (env: QueueCaseEnv) => Promise<void>, requires: QueueRequirement[] = []): QueueCase {
  return { id, name, requires, run };
}
