import { memoryBackend } from './memory.js';
import { redisBackend } from './redis.js';
import type { BackendAdapter, BackendName } from './types.js';

/** Every backend the bench measures, in table order. Add one adapter file per backend as it lands. */
export const BACKENDS: readonly BackendAdapter[] = [memoryBackend, redisBackend];

/** Backends the bench knows of but cannot measure yet, with the reason (shown under the tables). */
export const NOT_LANDED: readonly { name: BackendName; title: string; reason: string }[] = [
  { name: 'sqlite', title: 'SQLite', reason: '@cairn/kysely has not landed yet' },
  { name: 'postgres', title: 'PostgreSQL', reason: '@cairn/kysely has not landed yet' },
  { name: 'mysql', title: 'MariaDB', reason: '@cairn/kysely has not landed yet' },
  { name: 'mongodb', title: 'MongoDB (FerretDB)', reason: '@cairn/mongodb has not landed yet' },
];
