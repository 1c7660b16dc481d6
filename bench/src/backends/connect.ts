import type { WorkflowStore } from '@cairn/core/backend';
import { connectPostgresStore } from './postgres.js';
import { connectRedisStore } from './redis.js';
import type { StoreSpec } from './types.js';

/** Opens an uncounted store from a spec, in a worker process. */
export async function connectStore(spec: StoreSpec): Promise<{ store: WorkflowStore; close(): Promise<void> }> {
  switch (spec.backend) {
    case 'redis':
      return connectRedisStore(spec);
    case 'postgres':
      return connectPostgresStore(spec);
    default:
      throw new Error(`no worker-process store for backend ${spec.backend}`);
  }
}
