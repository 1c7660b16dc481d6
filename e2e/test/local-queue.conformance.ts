import { createLocalQueue } from '@cairn/core';
import { runQueueConformance } from '../src/suite/queue/index.js';

// The reference in-process queue must pass every queue case; only the worker-death case is
// skipped (by capability, with the reason printed): its jobs live in this process's memory.
runQueueConformance({
  name: 'local',
  source: 'in-process (@cairn/core createLocalQueue)',
  createQueue: async () => createLocalQueue(),
  settleMs: 500,
});
