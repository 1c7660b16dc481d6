// Payloads an engine encrypted (createEngine({ codec })), in headless Chromium: a dashboard whose
// engine has no codec shows each as `encoded (key k1)` (input, output, step output, state, event
// payload) and none of the plaintext; one whose engine has the codec shows them decoded. SQLite.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aesGcmCodec, createEngine, defineWorkflow, type Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { openSqliteStore } from '@cairn/kysely';
import type { Browser, Page } from 'playwright-core';
import { startDashboard } from '@cairn/dashboard';
import { chromiumMissing, launchChromium } from './support/chromium.js';
import { untilStatus } from './support/scenario.js';

const pay = defineWorkflow('pay', async (ctx, input: { card: string }) => {
  await ctx.setState('cart', { item: 'SECRET-ITEM' });
  const receipt = await ctx.step('charge', () => ({ card: input.card, receipt: 'SECRET-RECEIPT' }));
  const approval = await ctx.waitForEvent('approval');
  return { receipt, approval };
});

describe('dashboard over encrypted payloads in Chromium', { skip: chromiumMissing() }, () => {
  let dir: string;
  let store: WorkflowStore;
  let engine: Engine;
  let browser: Browser;
  let page: Page;
  let runId: string;
  const codec = aesGcmCodec({ keys: { k1: randomBytes(32) }, current: 'k1' });
  const quiet = { warn: () => {}, error: () => {} };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-dashboard-codec-'));
    store = await openSqliteStore(join(dir, 'runs.sqlite'));
    engine = createEngine({ store, workflows: [pay], codec, logger: quiet });
    await engine.start();
    runId = (await engine.startRun(pay, { card: 'SECRET-CARD' })).id;
    await untilStatus(engine, runId, 'waiting');
    await engine.sendEvent(runId, 'approval', { by: 'SECRET-APPROVER' });
    await untilStatus(engine, runId, 'completed');
    browser = await launchChromium();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await engine?.stop();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const text = async (selector: string) => (await page.locator(selector).textContent()) ?? '';

  test('an engine without the codec: every payload reads `encoded (key k1)`, no plaintext on the page', async () => {
    const reader = createEngine({ store, workflows: [], logger: quiet });
    const dashboard = await startDashboard({ engine: reader });
    try {
      await page.goto(new URL(`/runs/${runId}`, dashboard.url).href);
      await page.locator('#title .badge[data-status=completed]').waitFor();
      assert.equal(await text('#input'), 'encoded (key k1)');
      assert.equal(await text('#result'), 'encoded (key k1)');
      assert.equal(await text('#steps tr[data-step="charge"] .result'), 'encoded (key k1)');
      assert.equal(await text('#state tr td:last-child'), 'encoded (key k1)');
      assert.equal(await text('#events tr td:last-child'), 'encoded (key k1)');
      assert.doesNotMatch(await page.content(), /SECRET/);
    } finally {
      await dashboard.close();
      await reader.stop();
    }
  });

  test('an engine with the codec: the payloads are shown decoded', async () => {
    const dashboard = await startDashboard({ engine });
    try {
      await page.goto(new URL(`/runs/${runId}`, dashboard.url).href);
      await page.locator('#title .badge[data-status=completed]').waitFor();
      assert.equal(JSON.parse(await text('#input')).card, 'SECRET-CARD');
      assert.match(await text('#result'), /SECRET-RECEIPT/);
      assert.match(await text('#steps tr[data-step="charge"] .result'), /SECRET-RECEIPT/);
      assert.match(await text('#state tr td:last-child'), /SECRET-ITEM/);
      assert.match(await text('#events tr td:last-child'), /SECRET-APPROVER/);
    } finally {
      await dashboard.close();
    }
  });
});
