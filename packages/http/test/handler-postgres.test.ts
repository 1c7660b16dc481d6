// The push handler, and `cairn dispatch` in front of it, over PostgreSQL (a database of its own on the test server).
import { after } from 'node:test';
import { createPostgresDatabase, dropPostgresDatabase, stopSharedServices, uniqueName, usePostgres } from '@cairn/conformance/services';
import { dispatchCases } from './support/dispatch-cases.js';
import { type PushTarget, pushedCases } from './support/pushed-cases.js';

const server = await usePostgres();
let url = '';
const target: PushTarget = {
  name: 'PostgreSQL',
  ...(server.skipped ? { skip: server.reason } : {}),
  async setup() {
    if (server.skipped) throw new Error(server.reason);
    url = await createPostgresDatabase(server.url, uniqueName('http_push'));
    return { url };
  },
  async teardown() {
    if (url) await dropPostgresDatabase(url);
  },
};
pushedCases(target);
dispatchCases(target);
after(() => stopSharedServices());
