// The CLI against Redis through --url, with a key prefix of its own (--prefix).
import { after } from 'node:test';
import { deleteRedisPrefix, freshRedisPrefix, stopSharedServices, useRedis } from '@cairn/conformance/services';
import { openRedisStore } from '@cairn/redis';
import { cliCases } from './support/cli-cases.js';

const server = await useRedis();
let prefix = '';
cliCases({
  name: 'Redis (--url redis:// --prefix)',
  ...(server.skipped ? { skip: server.reason } : {}),
  async setup() {
    if (server.skipped) throw new Error(server.reason);
    prefix = freshRedisPrefix('cli');
    return { url: server.url, args: ['--prefix', prefix] };
  },
  open: async () => openRedisStore((server as { url: string }).url, { prefix }),
  async teardown() {
    if (prefix && !server.skipped) await deleteRedisPrefix(server.url, prefix);
  },
});
after(() => stopSharedServices());
