import type { QueueAdapter } from './types.js';

/** The distributed queues measured with worker processes. Add one file per queue as it lands. */
export const QUEUES: readonly QueueAdapter[] = [];
