import type { StoreSpec } from '../backends/types.js';

/** What a forked worker process is told (as JSON in argv[2]). */
export interface WorkerConfig {
  store: StoreSpec;
  queue: 'pg-boss' | 'bullmq';
  queueUrl: string;
  concurrency: number;
  queuePrefix: string;
}
