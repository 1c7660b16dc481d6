// The run page's streams in a real browser over an engine on SQLite: chunks written before the page
// opened are shown, a chunk written while it is open appears without a reload (server-sent
// events), the end is shown when the stream closes, chunk text is shown as text (never markup),
// and the API answers the stream list and typed errors.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createEngine, defineWorkflow, type Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { openSqliteStore } from '@cairn/kysely';
import type { Browser, Page } from 'playwright-core';
import { startDashboard, type Dashboard } from '@cairn/dashboard';
import { chromiumMissing, launchChromium } from './support/chromium.js';
import { until, untilStatus } from './support/scenario.js';

const HOSTILE = '<img src=x onerror="window.pwned=1">';

const narrate = defineWorkflow('narrate', async (ctx) => {
  const story = ctx.stream('story');
  await story.write({ line: 'once upon a time' });
  await story.write(HOSTILE);
  await ctx.emit('progress', 10);
  await ctx.waitForEvent('more');
  await story.write({ line: 'the end' });
  await story.close();
  return 'told';
});

describe('dashboard streams in Chromium on SQLite', { skip: chromiumMissing() }, () => {
  let dir = '';
  let store: WorkflowStore;
  let engine: Engine;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-dashboard-streams-'));
    store = await openSqliteStore(join(dir, 'runs.sqlite'), { migrate: true });
    engine = createEngine({ store, workflows: [narrate] });
    await engine.start();
    dashboard = await startDashboard({ engine });
    browser = await launchChromium();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await dashboard?.close();
    await engine?.stop();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lines = (name: string) =>
    page.locator(`.stream[data-stream="${name}"] .chunks li`).evaluateAll((items) => items.map((li) => `${li.getAttribute('data-index')} ${li.textContent}`));

  test("a run's streams show live: earlier chunks, a new one without reload, then the end", async () => {
    const run = await engine.startRun(narrate, null);
    await untilStatus(engine, run.id, 'waiting');
    await page.goto(new URL(`/runs/${encodeURIComponent(run.id)}`, dashboard.url).href);
    await until(async () => (await lines('story')).length === 2, 'the two story chunks written so far');
    assert.deepEqual(await lines('story'), ['0 {"line":"once upon a time"}', `1 ${JSON.stringify(HOSTILE)}`]);
    assert.deepEqual(await lines('progress'), ['0 10']);
    assert.equal(await page.locator('.stream[data-stream="story"] .stream-state').textContent(), 'live');
    assert.equal(await page.locator('.stream img').count(), 0, 'chunk text is never markup');
    assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);

    const reloads: string[] = [];
    page.on('framenavigated', (frame) => reloads.push(frame.url()));
    await engine.sendEvent(run.id, 'more', null);
    await until(async () => (await lines('story')).length === 3, 'the chunk written after the page opened');
    assert.equal((await lines('story'))[2], '2 {"line":"the end"}');
    await until(async () => (await page.locator('.stream[data-stream="story"] .stream-state').textContent()) === 'ended', 'the closed stream shown ended');
    await untilStatus(engine, run.id, 'completed');
    await until(
      async () => (await page.locator('.stream[data-stream="progress"] .stream-state').textContent()) === 'ended',
      'the open stream ends with its run',
    );
    assert.deepEqual(reloads, [], 'no reload');
    assert.deepEqual(await lines('story'), ['0 {"line":"once upon a time"}', `1 ${JSON.stringify(HOSTILE)}`, '2 {"line":"the end"}'], 'each chunk once');
  });

  test('the API: the stream list, and typed errors before any event', async () => {
    const run = await engine.startRun(narrate, null);
    await untilStatus(engine, run.id, 'waiting');
    const api = (path: string) =>
      page.evaluate(async (p) => {
        const response = await fetch(p);
        return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
      }, path);
    const listed = await api(`/api/runs/${encodeURIComponent(run.id)}/streams`);
    assert.equal(listed.status, 200);
    assert.deepEqual(JSON.parse(listed.body), {
      streams: [
        { stream: 'progress', length: 1, closed: false },
        { stream: 'story', length: 2, closed: false },
      ],
    });
    const missing = await api('/api/runs/no-such-run/streams/story/events');
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body).error.code, 'RUN_NOT_FOUND');
    const past = await api(`/api/runs/${encodeURIComponent(run.id)}/streams/story/events?from=9`);
    assert.equal(past.status, 400);
    assert.equal(JSON.parse(past.body).error.code, 'STREAM_RANGE');
    await engine.cancel(run.id);
  });
});
