// `cairn versions` against SQLite: list (table with the runs in flight, --json, --max-runs), retire
// and activate, and their exit codes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine, defineWorkflow } from '@cairn/core';
import type { VersionSummary } from '@cairn/core/backend';
import { openSqliteStore } from '@cairn/kysely';
import { runCairn } from './support/run-cairn.js';

const quiet = { warn: () => {}, error: () => {} };
const v1 = defineWorkflow('cli-versioned', async (ctx) => ctx.step('one', () => 1));
const v2 = defineWorkflow('cli-versioned', async (ctx) => ctx.step('one', () => 2), { version: 'v2\u001b[31m' });

describe('cairn versions (SQLite)', () => {
  let dir = '';
  let file = '';
  let url = '';
  const inFlight: string[] = [];
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
      // Runs in flight: started by a process without workers, so they stay pending.
      const client = createEngine({ store, workflows: [v1, v2], logger: quiet });
      await client.start({ workers: false });
      // A millisecond apart: runs of one millisecond have no order among themselves.
      for (const version of ['1', '1', undefined]) {
        inFlight.push((await client.startRun(v1, null, version === undefined ? {} : { version })).id);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await client.stop();
    } finally {
      await store.close();
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists the versions oldest first with their runs in flight (table with escaped names; --json; several workflows)', async () => {
    const table = await runCairn(['versions', 'cli-versioned', '--url', url]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^WORKFLOW\s+VERSION\s+STATUS\s+IN FLIGHT\s+OLDEST IN FLIGHT\s+AGE\s+LAST CHANGED$/m);
    assert.match(table.stdout, new RegExp(`^cli-versioned\\s+1\\s+active\\s+2\\s+${inFlight[0]}\\s+\\d`, 'm'));
    assert.match(table.stdout, new RegExp(`^cli-versioned\\s+v2\\S*\\s+active\\s+1\\s+${inFlight[2]}\\s+\\d`, 'm'));
    assert.doesNotMatch(table.stdout, /\u001b/, 'no raw escape reaches the terminal');
    const json = await runCairn(['versions', 'list', 'cli-versioned', '--url', url, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { versions: (VersionSummary & { oldestInFlight: { ageMs: number } | null })[]; truncated: string[] };
    assert.deepEqual(
      parsed.versions.map((v) => [v.version, v.status, v.inFlight, v.oldestInFlight?.runId]),
      [
        ['1', 'active', 2, inFlight[0]],
        ['v2\u001b[31m', 'active', 1, inFlight[2]],
      ],
    );
    assert.ok((parsed.versions[0]?.oldestInFlight?.ageMs ?? -1) >= 0);
    assert.deepEqual(parsed.truncated, []);
    const two = await runCairn(['versions', 'cli-versioned', 'unknown-workflow', '--url', url]);
    assert.equal(two.code, 0, two.stderr);
    assert.match(two.stdout, /^cli-versioned\s+1\s/m);
    assert.match(two.stdout, /^No registered versions of unknown-workflow\.$/m);
  });

  it('--max-runs caps the read and says so; a bad value exits 2', async () => {
    const capped = await runCairn(['versions', 'cli-versioned', '--max-runs', '1', '--url', url]);
    assert.equal(capped.code, 0, capped.stderr);
    assert.match(capped.stdout, /^cli-versioned\s+v2\S*\s+active\s+1\+\s/m);
    assert.match(capped.stdout, /cli-versioned: more than 1 runs in flight, only the newest 1 read \(--max-runs\)/);
    const json = await runCairn(['versions', 'cli-versioned', '--max-runs', '1', '--json', '--url', url]);
    assert.deepEqual((JSON.parse(json.stdout) as { truncated: string[] }).truncated, ['cli-versioned']);
    for (const bad of ['0', '100001', 'x']) {
      const refused = await runCairn(['versions', 'cli-versioned', '--max-runs', bad, '--url', url]);
      assert.equal(refused.code, 2, refused.stderr);
    }
    const none = await runCairn(['versions', '--url', url]);
    assert.equal(none.code, 2, none.stderr);
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

  it('a fork of a workflow whose every version is retired exits 4 (VERSION_RETIRED) and creates nothing', async () => {
    const store = await openSqliteStore(file);
    try {
      const engine = createEngine({ store, workflows: [v1], logger: quiet });
      await engine.start();
      const ended = await engine.startRun(v1, null, { version: '1', mode: 'inline' });
      assert.equal(await ended.result({ timeout: '10s' }), 1);
      await engine.stop();
      for (const version of ['1', 'v2\u001b[31m']) await store.versions.setStatus('cli-versioned', version, 'retired', Date.now());
      const before = (await store.runs.list({ workflow: 'cli-versioned', limit: 1000 })).runs.length;
      const fork = await runCairn(['fork', ended.id, '--from-step', 'one', '--url', url]);
      assert.equal(fork.code, 4, fork.stderr);
      assert.match(fork.stderr, /^error VERSION_RETIRED: Every version of workflow "cli-versioned" is retired/m);
      assert.equal((await store.runs.list({ workflow: 'cli-versioned', limit: 1000 })).runs.length, before);
      for (const version of ['1', 'v2\u001b[31m']) await store.versions.setStatus('cli-versioned', version, 'active', Date.now());
    } finally {
      await store.close();
    }
  });
});
