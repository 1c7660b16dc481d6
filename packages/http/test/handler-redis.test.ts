// The push handler over Redis (a key prefix of its own on the test server).
import { after } from 'node:test';
import { deleteRedisPrefix, freshRedisPrefix, stopSharedServices, useRedis } from '@cairn/conformance/services';
import { pushedCases } from './support/pushed-cases.js';

const server = await useRedis();
let prefix = '';
pushedCases({
  name: 'Redis',
  ...(server.skipped ? { skip: server.reason } : {}),
  async setup() {
    if (server.skipped) throw new Error(server.reason);
    prefix = freshRedisPrefix('http');
    return { url: server.url, redisPrefix: prefix };
  },
  async teardown() {
    if (prefix && !server.skipped) await deleteRedisPrefix(server.url, prefix);
  },
});
after(() => stopSharedServices());
