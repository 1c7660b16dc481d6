import type { Queue } from '@cairn/core/backend';
import type { BackendName } from '../backends/types.js';
import type { RequestCounter } from './request-counter.js';

/** A distributed queue the bench runs worker processes on. */
export interface QueueAdapter {
  readonly name: 'pg-boss' | 'bullmq';
  /** The store it is paired with (pg-boss with PostgreSQL, BullMQ with Redis). */
  readonly store: BackendName;
  /** Opens the queue on the server at `url` (the same server as its store). */
  create(url: string): Promise<Queue>;
  /** Counts the requests its server receives from every process (queue and store alike). */
  openRequestCounter(url: string): Promise<RequestCounter>;
}
