export * from './services/index.js';
