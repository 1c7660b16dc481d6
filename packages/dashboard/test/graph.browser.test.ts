// A graph run in the dashboard, in Chromium over SQLite: the graph drawn with each node's state,
// the approval form of a pending gate (a refused answer shows its error and records nothing; an
// accepted one moves the run on), and the screenshot docs/graphs.md shows (docs/images/).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createEngine, defineWorkflow, type Engine, isTerminalRunStatus } from '@cairn/core';
import { type Dashboard, startDashboard } from '@cairn/dashboard';
import { defineGraph, ref } from '@cairn/graph';
import { openSqliteStore } from '@cairn/kysely';
import type { Browser, Page } from 'playwright-core';
import { OUTPUT_DIR } from './support/browser-suite.js';
import { chromiumMissing, launchChromium } from './support/chromium.js';
import { until } from './support/scenario.js';

const orderReview = defineGraph(
  'order-review',
  {
    start: 'reserve',
    nodes: {
      reserve: { action: 'ok', next: { branch: [{ when: { gte: [ref('input.total'), 1000] }, to: 'manager' }], otherwise: 'charge' } },
      manager: {
        approval: { approvers: ['ada', 'grace'], schema: { type: 'object', properties: { note: { type: 'string' } }, additionalProperties: false } },
        next: 'charge',
        onReject: 'cancel',
      },
      charge: { action: 'ok', onError: 'cancel', next: 'ship' },
      ship: { forEach: { items: ref('input.lines'), action: 'ok', concurrency: 2 }, next: 'notify' },
      notify: { action: 'ok' },
      cancel: { action: 'ok' },
    },
  },
  { actions: { ok: (input) => input } },
);

// A code workflow: the dashboard draws what its run did from the history.
const codeOrder = defineWorkflow('code-order', async (ctx) => {
  await ctx.step('reserve', () => 1);
  await ctx.step('charge', () => 2);
  return ctx.waitForEvent('shipped');
});

describe('a graph run in the dashboard (Chromium, SQLite)', { skip: chromiumMissing() }, () => {
  let dir = '';
  let engine: Engine;
  let store: Awaited<ReturnType<typeof openSqliteStore>>;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;
  let runId = '';
  const states = () =>
    page
      .locator('svg.graph g.graph-node')
      .evaluateAll((nodes) => Object.fromEntries(nodes.map((n) => [n.getAttribute('data-node'), n.getAttribute('data-state')])));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-dashboard-graph-'));
    store = await openSqliteStore(join(dir, 'runs.sqlite'), { migrate: true });
    engine = createEngine({ store, workflows: [orderReview, codeOrder], logger: { warn: () => {}, error: () => {} } });
    await engine.start();
    runId = (await engine.startRun(orderReview, { total: 4200, lines: [{ sku: 'a' }, { sku: 'b' }] })).id;
    await until(async () => (await engine.steps(runId)).some((s) => s.name === 'manager' && s.status === 'waiting'), 'the gate waits');
    dashboard = await startDashboard({ engine });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  });
  after(async () => {
    await browser?.close();
    await dashboard?.close();
    await engine?.stop();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('draws a code run from its history: its recorded calls in call order, each with its state', async () => {
    const code = (await engine.startRun(codeOrder, null)).id;
    await until(async () => (await engine.steps(code)).some((s) => s.name === 'event:shipped' && s.status === 'waiting'), 'the code run waits');
    await page.goto(new URL(`/runs/${code}`, dashboard.url).href);
    await page.locator('svg.graph g.graph-node[data-node="event:shipped"]').waitFor();
    assert.deepEqual(await states(), { reserve: 'succeeded', charge: 'succeeded', 'event:shipped': 'waiting' });
    assert.equal(await page.locator('svg.graph g.graph-edge').count(), 2);
    assert.match((await page.locator('#graph-title').textContent()) ?? '', /What the run did/);
    assert.equal(await page.locator('form.approval').count(), 0);
  });

  test('draws the graph with each node state, and answers the pending gate through its form', async () => {
    await page.goto(new URL(`/runs/${runId}`, dashboard.url).href);
    await page.locator('svg.graph g.graph-node[data-node="manager"]').waitFor();
    assert.deepEqual(await states(), {
      reserve: 'succeeded',
      manager: 'waiting-approval',
      charge: 'not-run',
      ship: 'not-run',
      notify: 'not-run',
      cancel: 'not-run',
    });
    assert.equal(await page.locator('svg.graph g.graph-edge').count(), 7);
    assert.equal(await page.locator('svg.graph g.graph-edge[data-kind=error]').count(), 1);
    assert.match((await page.locator('svg.graph g.graph-edge[data-kind=branch] text').textContent()) ?? '', /input\.total >= 1000/);
    const form = page.locator('form.approval[data-node="manager"]');
    assert.match((await form.textContent()) ?? '', /Approvers: ada, grace/);
    mkdirSync(join(OUTPUT_DIR, 'sqlite'), { recursive: true });
    await page.screenshot({ path: join(OUTPUT_DIR, 'sqlite', 'dashboard-graph.png'), fullPage: true });

    // Someone who is not an approver: refused, shown, nothing recorded.
    await form.locator('input[name=by]').fill('mallory');
    await form.locator('textarea[name=payload]').fill('{"note":"fine"}');
    await form.locator('button[data-approve]').click();
    await until(async () => /not one of the approvers/.test((await page.locator('#error').textContent()) ?? ''), 'the refusal is shown');
    assert.equal(await store.events.get(runId, 'approval:manager', 1), undefined);
    // A payload the schema refuses.
    await form.locator('input[name=by]').fill('ada');
    await form.locator('textarea[name=payload]').fill('{"note":7}');
    await form.locator('button[data-approve]').click();
    await until(async () => /payload\.note must be a string/.test((await page.locator('#error').textContent()) ?? ''), 'the schema refusal is shown');
    assert.equal(await store.events.get(runId, 'approval:manager', 1), undefined);
    // Accepted: the run goes on, the page follows.
    await form.locator('textarea[name=payload]').fill('{"note":"known customer"}');
    await form.locator('button[data-approve]').click();
    await until(async () => isTerminalRunStatus((await engine.getRun(runId))?.status ?? 'pending'), 'the run ends');
    assert.equal((await engine.getRun(runId))?.status, 'completed');
    await until(async () => (await states()).notify === 'succeeded', 'the page shows the finished run', 10_000);
    assert.deepEqual(await states(), {
      reserve: 'succeeded',
      manager: 'succeeded',
      charge: 'succeeded',
      ship: 'succeeded',
      notify: 'succeeded',
      cancel: 'not-run',
    });
    assert.equal(await page.locator('form.approval').count(), 0, 'no form once the gate is answered');
    assert.deepEqual((await store.events.get(runId, 'approval:manager', 1))?.payload, { by: 'ada', decision: 'approve', payload: { note: 'known customer' } });
  });
});
