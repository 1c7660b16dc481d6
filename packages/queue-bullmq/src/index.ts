export { createBullMQQueue } from './create-bullmq-queue.js';
export type { BullMQQueueOptions } from './create-bullmq-queue.js';
export type { BullMQConnection } from './connection.js';
export { toBullMQPriority, fromBullMQPriority, BULLMQ_PRIORITY_MIDPOINT, MAX_CAIRN_PRIORITY, MIN_CAIRN_PRIORITY } from './priority.js';
