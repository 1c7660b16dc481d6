export { createRedisStore } from './create-redis-store.js';
export type { RedisStoreOptions, RedisWorkflowStore } from './create-redis-store.js';
export type { RedisClient } from './client.js';
export { createKeySpace, hashTagOf, runTag } from './keys.js';
export type { KeySpace } from './keys.js';
export { openRedisStore } from './open-redis-store.js';
export type { OpenRedisStoreOptions } from './open-redis-store.js';
