export { createMongoStore, DEFAULT_MAX_PAYLOAD_BYTES } from './mongo-store.js';
export type { MongoStore, MongoStoreOptions } from './mongo-store.js';
export type { ServerInfo } from './context.js';
export { encodeKey, decodeKey } from './key-codec.js';
export { RUN_INDEXES, SLOT_WAITER_INDEXES, VERSION_INDEXES } from './indexes.js';
