// `cairn graph` and `cairn approve` against SQLite: the drawing of a graph from its runs' history
// (and of one run, with node states), and answering an approval gate, refusals recording nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '@cairn/core';
import { toMermaid } from '@cairn/graph';
import { openSqliteStore } from '@cairn/kysely';
import { codeRun, gated } from './fixtures/graph-workflows.js';
import { runCairn } from './support/run-cairn.js';

const quiet = { warn: () => {}, error: () => {} };
describe('cairn graph and cairn approve (SQLite)', () => {
  let dir = '';
  let file = '';
  let url = '';
  let runId = '';
  let codeRunId = '';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-cli-graph-'));
    file = join(dir, 'cairn.sqlite');
    url = `sqlite:${file}`;
    const store = await openSqliteStore(file, { migrate: true });
    try {
      const engine = createEngine({ store, workflows: [gated, codeRun], logger: quiet, startMode: 'inline' });
      await engine.start();
      runId = (await engine.startRun(gated, { order: 1 })).id;
      codeRunId = (await engine.startRun(codeRun, null)).id;
      for (const id of [runId, codeRunId])
        for (let i = 0; i < 200 && (await store.runs.get(id))?.status !== 'waiting'; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      await engine.stop();
    } finally {
      await store.close();
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the graph its newest run recorded, by workflow and version (a second argument: --version is the CLI’s own); exit 3 for none', async () => {
    const out = await runCairn(['graph', 'cli-gated', '--url', url]);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, toMermaid(gated.graph));
    assert.equal((await runCairn(['graph', 'cli-gated', '3', '--url', url])).stdout, toMermaid(gated.graph));
    const none = await runCairn(['graph', 'cli-gated', '9', '--url', url]);
    assert.equal(none.code, 3);
    assert.match(none.stderr, /No run of cli-gated version 9 recorded a graph/);
  });

  it('draws one run with its node states', async () => {
    const out = await runCairn(['graph', '--run', runId, '--url', url, '--direction', 'LR']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^flowchart LR$/m);
    assert.match(out.stdout, /^ {2}class n1 succeeded$/m);
    assert.match(out.stdout, /^ {2}class n2 waiting_approval$/m);
    assert.match(out.stdout, /^ {2}class n3 not_run$/m);
  });

  it('draws a code run from its history: its recorded calls in call order, with their states; exit 3 for an unknown run', async () => {
    const out = await runCairn(['graph', '--run', codeRunId, '--url', url]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^ {2}n1\["pick<br\/>step: pick"\]$/m);
    assert.match(out.stdout, /^ {2}n2>"event:go<br\/>event: go"\]$/m);
    assert.match(out.stdout, /^ {2}n1 --> n2$/m);
    assert.match(out.stdout, /^ {2}class n1 succeeded$/m);
    assert.match(out.stdout, /^ {2}class n2 waiting$/m);
    const unknown = await runCairn(['graph', '--run', '01a2b3c4-0000-7000-8000-000000000000', '--url', url]);
    assert.equal(unknown.code, 3);
    assert.match(unknown.stderr, /not found/);
  });

  it('draws from a module with --workflows', async () => {
    const module = new URL('./fixtures/graph-workflows.ts', import.meta.url).pathname;
    const out = await runCairn(['graph', 'cli-gated', '--workflows', module]);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, toMermaid(gated.graph));
  });

  it('refuses bad answers with their exit codes and records nothing, then answers the gate once', async () => {
    const forbidden = await runCairn(['approve', runId, 'sign', '--by', 'bob', '--decision', 'approve', '--payload', '{"ok":true}', '--url', url]);
    assert.equal(forbidden.code, 4);
    assert.match(forbidden.stderr, /APPROVAL_FORBIDDEN/);
    const invalid = await runCairn(['approve', runId, 'sign', '--by', 'ada', '--decision', 'approve', '--payload', '{"ok":"yes"}', '--url', url]);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /APPROVAL_INVALID.*payload\.ok must be a boolean/);
    const notJson = await runCairn(['approve', runId, 'sign', '--by', 'ada', '--decision', 'approve', '--payload', '{ok', '--url', url]);
    assert.equal(notJson.code, 2);
    const store = await openSqliteStore(file);
    try {
      assert.equal(await store.events.get(runId, 'approval:sign', 1), undefined, 'nothing recorded');
    } finally {
      await store.close();
    }
    const ok = await runCairn(['approve', runId, 'sign', '--by', 'ada', '--decision', 'approve', '--payload', '{"ok":true}', '--url', url]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /gate sign answered approve by ada/);
    const again = await runCairn(['approve', runId, 'sign', '--by', 'ada', '--decision', 'approve', '--payload', '{"ok":true}', '--url', url]);
    assert.equal(again.code, 4);
    assert.match(again.stderr, /APPROVAL_NOT_PENDING/);
    const reopened = await openSqliteStore(file);
    try {
      assert.deepEqual((await reopened.events.get(runId, 'approval:sign', 1))?.payload, { by: 'ada', decision: 'approve', payload: { ok: true } });
    } finally {
      await reopened.close();
    }
  });
});
