// `cairn versions` against SQLite: list (table, --json), retire and activate, and their exit codes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine, defineWorkflow, type VersionRecord } from '@cairn/core';
import { openSqliteStore } from '@cairn/kysely';
import { runCairn } from './support/run-cairn.js';

const quiet = { warn: () => {}, error: () => {} };
const v1 = defineWorkflow('cli-versioned', async (ctx) => ctx.step('one', () => 1));
const v2 = defineWorkflow('cli-versioned', async (ctx) => ctx.step('one', () => 2), { version: 'v2\u001b[31m' });

describe('cairn versions (SQLite)', () => {
  let dir = '';
  let file = '';
  let url = '';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-cli-versions-'));
    file = join(dir, 'cairn.sqlite');
    url = `sqlite:${file}`;
    const store = await openSqliteStore(file, { migrate: true });
    try {
      for (const wf of [v1, v2]) {
        const engine = createEngine({ store, workflows: [wf], logger: quiet });
        await engine.start();
        await engine.stop();
      }
    } finally {
      await store.close();
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists the versions oldest first (table with escaped names; --json)', async () => {
    const table = await runCairn(['versions', 'cli-versioned', '--url', url]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^VERSION\s+STATUS\s+FIRST REGISTERED\s+LAST CHANGED/m);
    assert.match(table.stdout, /^1\s+active\s/m);
    assert.doesNotMatch(table.stdout, /\u001b/, 'no raw escape reaches the terminal');
    const json = await runCairn(['versions', 'list', 'cli-versioned', '--url', url, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const { versions } = JSON.parse(json.stdout) as { versions: VersionRecord[] };
    assert.deepEqual(
      versions.map((v) => [v.version, v.status]),
      [
        ['1', 'active'],
        ['v2\u001b[31m', 'active'],
      ],
    );
    const none = await runCairn(['versions', 'unknown-workflow', '--url', url]);
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /^No registered versions of unknown-workflow\.$/m);
  });

  it('retire and activate change the stored status; an unregistered version exits 3 and creates nothing', async () => {
    const retired = await runCairn(['versions', 'retire', 'cli-versioned', '1', '--url', url]);
    assert.equal(retired.code, 0, retired.stderr);
    assert.match(retired.stdout, /^Version 1 of cli-versioned retired\.$/m);
    const store = await openSqliteStore(file);
    try {
      assert.equal((await store.versions.get('cli-versioned', '1'))?.status, 'retired');
      const activated = await runCairn(['versions', 'activate', 'cli-versioned', '1', '--url', url]);
      assert.equal(activated.code, 0, activated.stderr);
      assert.match(activated.stdout, /^Version 1 of cli-versioned active\.$/m);
      assert.equal((await store.versions.get('cli-versioned', '1'))?.status, 'active');
      const missing = await runCairn(['versions', 'retire', 'cli-versioned', 'v9', '--url', url]);
      assert.equal(missing.code, 3, missing.stderr);
      assert.match(missing.stderr, /Version v9 of cli-versioned is not registered/);
      assert.equal(await store.versions.get('cli-versioned', 'v9'), undefined);
      assert.equal((await store.versions.list('cli-versioned')).length, 2);
    } finally {
      await store.close();
    }
  });
});
