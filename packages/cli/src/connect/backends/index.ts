import type { UrlBackend } from '../backend.js';
import { mongodbBackend } from './mongodb.js';
import { mysqlBackend } from './mysql.js';
import { postgresBackend } from './postgres.js';
import { redisBackend } from './redis.js';
import { sqliteBackend } from './sqlite.js';

/** Every backend `--url` can open; a new backend is one file here and one line in this list. */
export const URL_BACKENDS: readonly UrlBackend[] = [postgresBackend, mysqlBackend, sqliteBackend, redisBackend, mongodbBackend];
