// `cairn doctor` on Redis: drift in the store's own index structures (keys deleted by hand behind
// the store's back) is reported through the store's hook, repaired by --fix, and the exit code
// turns 0 once nothing remains.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { deleteRedisPrefix, freshRedisPrefix, stopSharedServices, useRedis } from '@cairn/conformance/services';
import type { DoctorReport } from '@cairn/core';
import { createKeySpace, openRedisStore } from '@cairn/redis';
import { Redis } from 'ioredis';
import { EXIT } from '../src/exit-codes.js';
import { runCairn } from './support/run-cairn.js';

const server = await useRedis();
after(() => stopSharedServices());

describe('cairn doctor on Redis (--url redis:// --prefix)', { skip: server.skipped ? server.reason : false }, () => {
  const prefix = freshRedisPrefix('doctor');
  after(async () => {
    if (!server.skipped) await deleteRedisPrefix(server.url, prefix);
  });

  it('index entries of a run whose keys were deleted by hand: reported, removed by --fix (exit 0), then clean', async () => {
    const url = (server as { url: string }).url;
    const store = openRedisStore(url, { prefix });
    const client = new Redis(url);
    let id = '';
    try {
      id = (
        await store.runs.create({ id: `doctor-${prefix}`, workflow: 'wf', version: 'v1', input: null, wakeAt: Date.now(), idempotencyKey: 'k' }, Date.now())
      ).run.id;
      assert.equal(await client.del(createKeySpace(prefix).run(id)), 1);
    } finally {
      client.disconnect();
      await store.close();
    }
    const cairn = (...args: string[]) => runCairn(['doctor', '--url', url, '--prefix', prefix, ...args]);

    const found = await cairn('--json');
    assert.equal(found.code, EXIT.problems, found.stderr);
    const report = JSON.parse(found.stdout) as DoctorReport;
    assert.deepEqual(report.findings.map((f) => `${f.code} ${f.runId}`).sort(), [`redis.idempotency-dangling ${id}`, `redis.index-dangling ${id}`]);

    const fixed = await cairn('--fix');
    assert.equal(fixed.code, EXIT.ok, `${fixed.stdout}${fixed.stderr}`);
    assert.match(fixed.stdout, /✔ fixed: removed its index entries/);
    assert.match(fixed.stdout, /^2 findings, 2 fixed, none remains\.$/m);

    const clean = await cairn();
    assert.equal(clean.code, EXIT.ok, clean.stderr);
    assert.match(clean.stdout, /No problems found\./);
  });
});
