import type { Queue } from '@cairn/core/backend';

/**
 * Runs a worker in a child process for the worker-death case: the child imports `module`, calls
 * its exported `createQueue(namespace)`, starts a worker that never finishes its job, and is then
 * killed with SIGKILL.
 */
export interface QueueChildWorker {
  /** A module (file URL or absolute path) exporting `createQueue(namespace: string): Promise<Queue>`. */
  module: string | URL;
  /** Extra environment for the child (for example the server URL the harness found). */
  env?(): Record<string, string>;
}

/**
 * Describes a queue to the queue conformance suite: how to reach its server and how to open a
 * fresh, isolated queue for every case. What the queue can do is read from `queue.capabilities`;
 * a case that needs what it lacks is skipped with the reason.
 */
export interface QueueHarness {
  /** The queue's name in test titles and the summary line, e.g. `local`, `pg-boss`, `bullmq`. */
  name: string;
  /** Where the server came from, printed in the summary line; a function is called after `setup()`. */
  source?: string | (() => string);
  /**
   * Starts or connects to the server, once, before the first case. Resolving `{ skip: reason }`
   * marks every case skipped with that reason (no server here, and none required).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a setup that returns nothing (`async setup() {}`) must type-check; `undefined` in its place would reject it
  setup?(): Promise<void | { skip: string }>;
  /**
   * Opens a queue in `namespace` (a schema, key prefix...), empty on first use. Cases that need a
   * second process's view of the same jobs call it again with the same namespace, but only when
   * `capabilities.distributed` is true.
   */
  createQueue(namespace: string): Promise<Queue>;
  /** Closes the first queue of a finished case and drops its namespace. Absent: `queue.close()`. */
  destroyQueue?(queue: Queue, namespace: string): Promise<void>;
  /** Stops or disconnects the server, once, after the last case. */
  teardown?(): Promise<void>;
  /** The worker-death case's child process. Absent: that case is skipped with the reason. */
  childWorker?: QueueChildWorker;
  /** Longest wait for a ready job to be delivered (default 15 000 ms). */
  deliveryTimeoutMs?: number;
  /** Longest wait for a dead worker's job to be delivered again (default 90 000 ms). */
  redeliveryTimeoutMs?: number;
  /**
   * How long to keep watching for a delivery that must not happen (a thrown job coming back, a
   * deduplicated send). Set it above the queue's redelivery delay. Default 2 000 ms.
   */
  settleMs?: number;
}

/** Options of `runQueueConformance`. */
export interface QueueConformanceOptions {
  /**
   * Registers only the cases whose id starts with one of these (e.g. `queue.dedupe`). Default:
   * every case, or `CAIRN_CONFORMANCE_ONLY` (comma separated) when set.
   */
  only?: string[];
}
