// `cairn tail` against SQLite: a finished run's streams, one stream as JSON lines, a live run whose
// chunks arrive while the command waits, and the errors (unknown run, unknown stream, bad --from).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine, defineWorkflow } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { openSqliteStore } from '@cairn/kysely';
import { runCairn, startCairn } from './support/run-cairn.js';

const chatty = defineWorkflow('chatty', async (ctx) => {
  await ctx.emit('tokens', 'hello');
  await ctx.emit('tokens', { word: 'world', esc: '\u001b[31m' });
  await ctx.emit('progress', 50);
  await ctx.closeStream('tokens');
  await ctx.waitForEvent('go');
  await ctx.emit('progress', 100);
  return 'done';
});

describe('cairn tail', () => {
  let scratch = '';
  let url = '';
  let store: WorkflowStore;
  let runId = '';
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'cairn-cli-tail-'));
    const file = join(scratch, 'cairn.sqlite');
    url = `sqlite:${file}`;
    store = await openSqliteStore(file, { migrate: true });
    const engine = createEngine({ store, workflows: [chatty] });
    await engine.start();
    const handle = await engine.startRun(chatty, null);
    runId = handle.id;
    for (let i = 0; i < 200 && (await store.runs.get(runId))?.status !== 'waiting'; i += 1) await new Promise((r) => setTimeout(r, 20));
    await engine.stop();
  });
  after(async () => {
    await store.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('one stream as JSON lines, from an index; a closed stream ends the command while the run waits', async () => {
    const all = await runCairn(['tail', runId, '--stream', 'tokens', '--json', '--url', url]);
    assert.equal(all.code, 0, all.stderr);
    const lines = all.stdout.trim().split('\n');
    assert.deepEqual(
      lines.map((l) => {
        const { stream, index, data } = JSON.parse(l) as { stream: string; index: number; data: unknown };
        return { stream, index, data };
      }),
      [
        { stream: 'tokens', index: 0, data: 'hello' },
        { stream: 'tokens', index: 1, data: { word: 'world', esc: '\u001b[31m' } },
      ],
    );
    assert.doesNotMatch(all.stdout, /\u001b/, 'no raw escape reaches the terminal');
    const fromOne = await runCairn(['tail', runId, '--stream', 'tokens', '--from', '1', '--url', url]);
    assert.equal(fromOne.code, 0, fromOne.stderr);
    assert.equal(fromOne.stdout, '#1 {"word":"world","esc":"\\u001b[31m"}\n');
  });

  it('every stream, live: the open stream prints its next chunk when the run writes it, and ends with the run', async () => {
    const child = startCairn(['tail', runId, '--url', url]);
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      for (let i = 0; i < 500 && !(stdout.includes('progress #0 50') && stdout.includes('tokens #1')); i += 1) await new Promise((r) => setTimeout(r, 20));
      assert.match(stdout, /^progress #0 50$/m, stderr);
      assert.match(stdout, /^tokens #0 "hello"$/m);
      assert.doesNotMatch(stdout, /progress #1/, 'the second progress chunk is not written yet');
      const engine = createEngine({ store, workflows: [chatty] });
      await engine.start();
      await engine.sendEvent(runId, 'go', null);
      assert.equal(await engine.result(runId, { timeout: '20s' }), 'done');
      await engine.stop();
      assert.equal(await exited, 0, stderr);
      assert.match(stdout, /^progress #1 100$/m);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('an unknown run exits 3, a stream the ended run never wrote exits 3, --from past the end exits 2', async () => {
    const unknown = await runCairn(['tail', 'no-such-run', '--url', url]);
    assert.equal(unknown.code, 3, unknown.stderr);
    const never = await runCairn(['tail', runId, '--stream', 'never', '--url', url]);
    assert.equal(never.code, 3, never.stderr);
    assert.match(never.stderr, /ended without writing stream "never"/);
    const past = await runCairn(['tail', runId, '--stream', 'tokens', '--from', '9', '--url', url]);
    assert.equal(past.code, 2, past.stderr);
  });
});
