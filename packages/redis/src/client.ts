import { CairnError } from '@cairn/core';
import { driverError } from '@cairn/core/backend';
import type { Cluster, Redis } from 'ioredis';
import type { LuaScript } from './scripts/script.js';

/** The ioredis client the store runs over: a single server (`Redis`) or a `Cluster`. */
export type RedisClient = Redis | Cluster;

type Arg = string | number;

/** Every call the store makes, with ioredis errors turned into `CairnError('STORE_ERROR')`. */
export interface RedisCaller {
  readonly client: RedisClient;
  /** Runs a script by `EVALSHA`; on `NOSCRIPT` (cache flushed, failover, new node) sends it by `EVAL`, which also caches it. */
  script(script: LuaScript, keys: readonly string[], args: readonly Arg[]): Promise<unknown>;
  /** Any other command. */
  command(what: string, command: string, args: readonly Arg[]): Promise<unknown>;
}

/** Wraps a driver failure; a `CairnError` passes through unchanged. */
export function storeError(what: string, err: unknown): CairnError {
  return CairnError.is(err) ? err : driverError('STORE_ERROR', `Redis store: ${what}`, err);
}

const isNoScript = (err: unknown): boolean => err instanceof Error && err.message.startsWith('NOSCRIPT');

/** Builds the caller over a user's client. */
export function createCaller(client: RedisClient): RedisCaller {
  const call = (command: string, args: readonly Arg[]) => client.call(command, ...args);
  return {
    client,
    async script(script, keys, args) {
      const tail = [keys.length, ...keys, ...args];
      try {
        return await call('EVALSHA', [script.sha, ...tail]);
      } catch (err) {
        if (!isNoScript(err)) throw storeError(script.name, err);
      }
      try {
        return await call('EVAL', [script.source, ...tail]);
      } catch (err) {
        throw storeError(script.name, err);
      }
    },
    async command(what, command, args) {
      try {
        return await call(command, args);
      } catch (err) {
        throw storeError(what, err);
      }
    },
  };
}

/** The `keyPrefix` option of a client, if it has one (the store refuses those: see the docs). */
export function clientKeyPrefix(client: RedisClient): string | undefined {
  const options = client.options as { keyPrefix?: unknown; redisOptions?: { keyPrefix?: unknown } };
  const prefix = options.keyPrefix ?? options.redisOptions?.keyPrefix;
  return typeof prefix === 'string' && prefix !== '' ? prefix : undefined;
}
