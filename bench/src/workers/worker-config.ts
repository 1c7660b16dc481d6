import type { StoreSpec } from '../backends/types.js';

/** What a forked worker process is told (as JSON in argv[2]). */
export interface WorkerConfig {
  store: StoreSpec;
  /** `local`: no distributed queue; runs reach the worker through the store (signals or polling). */
  queue: 'pg-boss' | 'bullmq' | 'local';
  queueUrl: string;
  concurrency: number;
  queuePrefix: string;
  /**
   * Report each run that completes here to the parent as `{ ended: [runId, at] }`, `at` being
   * `performance.timeOrigin + performance.now()` when the completing write returned (the
   * `run.completed` lifecycle event), comparable with the parent's clock on one machine.
   */
  reportEnds?: boolean;
}
