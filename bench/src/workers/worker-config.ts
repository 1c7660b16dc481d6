import type { StoreSpec } from '../backends/types.js';

/** What a forked worker process is told (as JSON in argv[2]). */
export interface WorkerConfig {
  store: StoreSpec;
  /** `local`: no distributed queue; runs reach the worker through the store (signals or polling). */
  queue: 'pg-boss' | 'bullmq' | 'local';
  queueUrl: string;
  concurrency: number;
  queuePrefix: string;
}
