import { memoryBackend } from './memory.js';
import { mongodbBackend } from './mongodb.js';
import { mysqlBackend } from './mysql.js';
import { postgresBackend } from './postgres.js';
import { redisBackend } from './redis.js';
import { sqliteBackend } from './sqlite.js';
import type { BackendAdapter, BackendName } from './types.js';

/** Every backend the bench measures, in table order. One adapter file per backend. */
export const BACKENDS: readonly BackendAdapter[] = [memoryBackend, sqliteBackend, postgresBackend, mysqlBackend, mongodbBackend, redisBackend];

/** Backends the bench knows of but cannot measure yet, with the reason (shown under the tables). */
export const NOT_LANDED: readonly { name: BackendName; title: string; reason: string }[] = [];
