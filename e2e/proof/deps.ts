/**
 * The store and queue packages, loaded through the bench workspace's dependencies (the proof must
 * not add dependencies to `@cairn/conformance`). Run with `--conditions=@cairn/source` to load sources.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const bench = createRequire(new URL('../../bench/package.json', import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: the modules come from the bench's dependencies at run time; this package cannot name their types without depending on them
async function load(name: string): Promise<any> {
  return import(pathToFileURL(bench.resolve(name)).href);
}

export const kyselyStore = () => load('@cairn/kysely');
export const kyselyPostgres = () => load('@cairn/kysely/postgres');
export const kyselyMysql = () => load('@cairn/kysely/mysql');
export const redisStore = () => load('@cairn/redis');
export const pgBossQueue = () => load('@cairn/queue-pg-boss');
export const bullmqQueue = () => load('@cairn/queue-bullmq');
export const kysely = () => load('kysely');
export const pg = () => load('pg');
export const ioredis = () => load('ioredis');
export const mysql2 = () => load('mysql2');
