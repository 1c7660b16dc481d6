import { bullmqQueue } from './bullmq.js';
import { pgBossQueue } from './pg-boss.js';
import type { QueueAdapter } from './types.js';

/** The distributed queues measured with worker processes. One file per queue. */
export const QUEUES: readonly QueueAdapter[] = [pgBossQueue, bullmqQueue];
