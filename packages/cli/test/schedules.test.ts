// `cairn schedules` against SQLite: list, pause, resume, trigger, delete, and their exit codes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine, defineWorkflow } from '@cairn/core';
import type { ScheduleRecord } from '@cairn/core/backend';
import { openSqliteStore } from '@cairn/kysely';
import { runCairn } from './support/run-cairn.js';

const wf = defineWorkflow('cli-scheduled', async (ctx, input: unknown) => ctx.step('seen', () => input));
const quiet = { warn: () => {}, error: () => {} };

describe('cairn schedules (SQLite)', () => {
  let dir = '';
  let url = '';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-cli-schedules-'));
    const file = join(dir, 'cairn.sqlite');
    url = `sqlite:${file}`;
    const store = await openSqliteStore(file, { migrate: true });
    try {
      const engine = createEngine({ store, workflows: [wf], logger: quiet });
      await engine.schedules.create({ name: 'nightly', workflow: wf, cron: '30 2 * * *', timezone: 'Europe/Berlin', input: { n: 1 } });
      await engine.schedules.create({ name: 'odd\u001b[31mname', workflow: wf, cron: '0 * * * *' });
    } finally {
      await store.close();
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists the schedules (table, escaped names; --json)', async () => {
    const table = await runCairn(['schedules', '--url', url]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+WORKFLOW\s+CRON \/ ZONE\s+STATE/m);
    assert.match(table.stdout, /^nightly\s+cli-scheduled\s+30 2 \* \* \* Europe\/Berlin\s+active/m);
    assert.doesNotMatch(table.stdout, /\u001b/, 'no raw escape reaches the terminal');
    const json = await runCairn(['schedules', 'list', '--url', url, '--json', '--limit', '1']);
    assert.equal(json.code, 0, json.stderr);
    const { schedules } = JSON.parse(json.stdout) as { schedules: ScheduleRecord[] };
    assert.deepEqual(
      schedules.map((s) => s.name),
      ['nightly'],
    );
  });

  it('pause, resume, trigger (recorded for a worker), delete; an unknown name exits 3', async () => {
    const paused = await runCairn(['schedules', 'pause', 'nightly', '--url', url]);
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(paused.stdout, /^Schedule nightly paused\.$/m);
    const resumed = await runCairn(['schedules', 'resume', 'nightly', '--url', url]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /^Schedule nightly active, next tick /m);
    const fired = await runCairn(['schedules', 'trigger', 'nightly', '--url', url, '--json']);
    assert.equal(fired.code, 0, fired.stderr);
    const { key, runId } = JSON.parse(fired.stdout) as { key: string; runId?: string };
    assert.match(key, /^schedule:nightly:trigger:/);
    assert.equal(runId, undefined, 'the CLI has no workflow code: a worker starts the run');
    // A worker (an engine with the workflow) starts the recorded run at its next pass.
    const store = await openSqliteStore(join(dir, 'cairn.sqlite'));
    try {
      const worker = createEngine({ store, workflows: [wf], logger: quiet });
      await worker.schedules.tick();
      assert.equal((await store.runs.findByIdempotencyKey('cli-scheduled', key))?.workflow, 'cli-scheduled');
      await worker.stop();
    } finally {
      await store.close();
    }
    const deleted = await runCairn(['schedules', 'delete', 'nightly', '--url', url]);
    assert.equal(deleted.code, 0, deleted.stderr);
    for (const args of [
      ['delete', 'nightly'],
      ['pause', 'nightly'],
      ['trigger', 'nightly'],
    ]) {
      const missing = await runCairn(['schedules', ...args, '--url', url]);
      assert.equal(missing.code, 3, `${args.join(' ')}: ${missing.stderr}`);
      assert.match(missing.stderr, /Schedule nightly not found/);
    }
    const bad = await runCairn(['schedules', 'pause', '', '--url', url]);
    assert.equal(bad.code, 2, bad.stderr);
  });
});
