import type { Json } from '../model/json.js';

/** A job's group: jobs of one group share a concurrency cap on each worker. */
export interface JobGroup {
  id: string;
  /** Selects a per-tier cap from `groupConcurrency.tiers`. */
  tier?: string;
}

/** How many jobs of any one group a worker runs at once. */
export type GroupConcurrency = number | { default: number; tiers?: Record<string, number> };

/** Options of `Queue.send`. */
export interface SendOptions {
  /** Deliver no sooner than this many milliseconds from now. */
  delayMs?: number;
  /** Higher runs sooner among ready jobs. Default 0. */
  priority?: number;
  /** While a job with this key is queued and not yet started, a second send is a no-op. */
  dedupeKey?: string;
  group?: JobGroup;
}

/** A delivered job. */
export interface Job {
  id: string;
  queue: string;
  /** The payload after a JSON round trip, exactly as a remote worker would see it. */
  payload: Json;
  group?: JobGroup;
}

/** Options of `Queue.work`. */
export interface WorkOptions {
  /** Jobs this worker runs at once (default 1). */
  concurrency?: number;
  /** Cap per group (requires the `groups` capability). */
  groupConcurrency?: GroupConcurrency;
}

/** A running consumer of one queue. */
export interface QueueWorker {
  /** Stops fetching and waits for the jobs in flight to settle. */
  stop(): Promise<void>;
}

/** What a queue can do. The engine refuses configurations a queue cannot honour. */
export interface QueueCapabilities {
  /** Job groups with per-group concurrency caps enforced at fetch time. */
  groups: boolean;
  delay: boolean;
  priority: boolean;
  dedupe: boolean;
  /** Jobs are visible to other processes (false for the in-process queue). */
  distributed: boolean;
}

/**
 * The queue contract. Delivery is at least once: a job may run again after its worker dies.
 * Queue-level retries are off: a job whose handler throws is not redelivered by the queue; the
 * engine decides retries itself.
 */
export interface Queue {
  readonly name: string;
  readonly capabilities: QueueCapabilities;
  /** Enqueues one job. Resolves once the job is durably accepted. */
  send(queue: string, payload: Json, options?: SendOptions): Promise<void>;
  /** Starts consuming `queue`; `handler` resolving acknowledges the job. */
  work(queue: string, handler: (job: Job) => Promise<void>, options?: WorkOptions): Promise<QueueWorker>;
  /** Stops every worker and releases what the queue itself created. */
  close(): Promise<void>;
}
