// The CLI over a store whose payloads an engine encrypted (createEngine({ codec })): without the
// codec it shows them as `encoded (key k1)`, with the config file's codec decoded, and with the wrong
// key it fails with CODEC_ERROR naming the run and the key.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { aesGcmCodec, createEngine, defineWorkflow } from '@cairn/core';
import { openSqliteStore } from '@cairn/kysely';
import { runCairn } from './support/run-cairn.js';

const CONFIG = fileURLToPath(new URL('./fixtures/codec.config.ts', import.meta.url));

describe('cairn over encrypted payloads', () => {
  let scratch = '';
  let db = '';
  let runId = '';
  const key = randomBytes(32).toString('base64');

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'cairn-cli-codec-'));
    db = join(scratch, 'cairn.sqlite');
    const store = await openSqliteStore(db, { migrate: true });
    const wf = defineWorkflow('pay', async (ctx, input: { card: string }) => {
      await ctx.setState('cart', { item: 'SECRET-ITEM' });
      const paid = await ctx.step('charge', () => ({ card: input.card, receipt: 'SECRET-RECEIPT' }));
      return { paid };
    });
    const engine = createEngine({ store, workflows: [wf], codec: aesGcmCodec({ keys: { k1: key }, current: 'k1' }), startMode: 'inline' });
    try {
      await engine.start();
      const handle = await engine.startRun(wf, { card: 'SECRET-CARD' });
      runId = handle.id;
      await handle.result({ timeout: '10s' });
    } finally {
      await engine.stop();
      await store.close();
    }
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('without the codec (--url): payloads show as `encoded (key k1)`, and no plaintext', async () => {
    const shown = await runCairn(['show', runId, '--url', `sqlite:${db}`]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /output\s+encoded \(key k1\)/);
    assert.match(shown.stdout, /state\s+cart = encoded \(key k1\)/);
    assert.doesNotMatch(shown.stdout, /SECRET/);
  });

  it("with the config file's codec: payloads show decoded", async () => {
    const shown = await runCairn(['--config', CONFIG, 'show', runId], { env: { CAIRN_TEST_SQLITE: db, CAIRN_TEST_KEY: key } });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /SECRET-RECEIPT/);
    assert.match(shown.stdout, /cart = \{"item":"SECRET-ITEM"\}/);
    const json = await runCairn(['--config', CONFIG, 'show', runId, '--json'], { env: { CAIRN_TEST_SQLITE: db, CAIRN_TEST_KEY: key } });
    assert.equal(json.code, 0, json.stderr);
    assert.match(json.stdout, /SECRET-CARD/);
  });

  it('with another key under the same id: exit 1, CODEC_ERROR naming the run and the key', async () => {
    const wrong = randomBytes(32).toString('base64');
    const shown = await runCairn(['--config', CONFIG, 'show', runId], { env: { CAIRN_TEST_SQLITE: db, CAIRN_TEST_KEY: wrong } });
    assert.equal(shown.code, 1, shown.stdout);
    assert.match(shown.stderr, new RegExp(`CODEC_ERROR.*run ${runId} \\(key k1\\)`));
    assert.doesNotMatch(shown.stdout + shown.stderr, /SECRET/);
  });
});
