export { createPgBossQueue } from './create-pg-boss-queue.js';
export type { PgBossQueueOptions } from './create-pg-boss-queue.js';
