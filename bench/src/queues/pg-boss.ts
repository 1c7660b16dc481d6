import { createPgBossQueue } from '@cairn/queue-pg-boss';
import { openPostgresRequestCounter } from './postgres-request-counter.js';
import type { QueueAdapter } from './types.js';

/** pg-boss on the bench's durable PostgreSQL (schema `cairn_bench`), paired with the PostgreSQL store. */
export const pgBossQueue: QueueAdapter = {
  name: 'pg-boss',
  store: 'postgres',
  async create(url) {
    return createPgBossQueue({ connectionString: url, schema: 'cairn_bench', onError: () => {} });
  },
  openRequestCounter: openPostgresRequestCounter,
};
