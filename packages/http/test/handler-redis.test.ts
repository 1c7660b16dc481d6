// The push handler, and `cairn dispatch` in front of it, over Redis (a key prefix of its own on the test server).
import { after } from 'node:test';
import { deleteRedisPrefix, freshRedisPrefix, stopSharedServices, useRedis } from '@cairn/conformance/services';
import { dispatchCases } from './support/dispatch-cases.js';
import { type PushTarget, pushedCases } from './support/pushed-cases.js';

const server = await useRedis();
let prefix = '';
const target: PushTarget = {
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
};
pushedCases(target);
dispatchCases(target);
after(() => stopSharedServices());
