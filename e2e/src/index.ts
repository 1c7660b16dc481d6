export * from './services/index.js';
export * from './suite/index.js';
export * from './suite/queue/index.js';
