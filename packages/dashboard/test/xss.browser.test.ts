// Run data is shown as text, never run as code: runs whose workflow, step and event names,
// input, outputs, state, errors, event payloads, idempotency key and cancel reason are HTML and
// script, shown in headless Chromium. Nothing executes (the sentinel stays unset, no dialog
// opens, no element is injected, the page reports no CSP violation) and every string appears
// literally. A real engine on SQLite.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, defineWorkflow, type Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { openSqliteStore } from '@cairn/kysely';
import type { Browser, Page } from 'playwright-core';
import { startDashboard, type Dashboard } from '@cairn/dashboard';
import { chromiumMissing, launchChromium } from './support/chromium.js';
import { untilStatus } from './support/scenario.js';

const X = {
  workflow: `<img src=x onerror="window.__pwned='workflow'">`,
  step: `<script>window.__pwned='step'</script>`,
  failingStep: `<img src=y onerror=alert('failing-step')>`,
  event: `<u onclick="alert('event')">approval</u>`,
  output: `<svg onload="window.__pwned='output'"></svg>`,
  stateKey: `<b onmouseover="window.__pwned='state'">key</b>`,
  payload: `"><iframe srcdoc="<script>parent.__pwned='payload'</script>"></iframe>`,
  error: `</pre><img src=z onerror="alert('error')"><pre>`,
  key: `"><script>window.__pwned='key'</script>`,
  input: `<a href="javascript:window.__pwned='input'">click</a>`,
  reason: `<details open ontoggle="window.__pwned='reason'">`,
};

const hostile = defineWorkflow(X.workflow, async (ctx, input: { html: string; fail: boolean }) => {
  await ctx.step(X.step, () => ({ html: X.output }));
  await ctx.setState(X.stateKey, X.output);
  const answer = await ctx.waitForEvent(X.event);
  await ctx.step(X.failingStep, () => {
    if (input.fail) throw new Error(X.error);
    return answer;
  });
  return answer;
});

describe('dashboard escaping in Chromium', { skip: chromiumMissing() }, () => {
  let dir: string;
  let store: WorkflowStore;
  let engine: Engine;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;
  let failed: string;
  let waiting: string;
  const dialogs: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-dashboard-xss-'));
    store = await openSqliteStore(join(dir, 'runs.sqlite'));
    engine = createEngine({ store, workflows: [hostile], logger: { warn: () => {}, error: () => {} } });
    await engine.start();
    failed = (await engine.startRun(hostile, { html: X.input, fail: true }, { idempotencyKey: X.key })).id;
    waiting = (await engine.startRun(hostile, { html: X.input, fail: false })).id;
    await untilStatus(engine, failed, 'waiting');
    await engine.sendEvent(failed, X.event, { note: X.payload });
    await untilStatus(engine, failed, 'failed');
    await untilStatus(engine, waiting, 'waiting');
    await engine.cancel(waiting, { reason: X.reason });
    await untilStatus(engine, waiting, 'cancelled');
    dashboard = await startDashboard({ engine });
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.addInitScript(() => {
      const w = window as unknown as { __violations: string[] };
      w.__violations = [];
      document.addEventListener('securitypolicyviolation', (event) => w.__violations.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
  });
  after(async () => {
    await browser?.close();
    await dashboard?.close();
    await engine?.stop();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Nothing ran, nothing was injected, nothing was blocked. */
  async function assertInert(): Promise<void> {
    // Give an injected image or frame time to load and fire its handler, were there one.
    await page.waitForLoadState('networkidle');
    const seen = await page.evaluate(() => {
      const w = window as unknown as { __pwned?: unknown; __violations: string[] };
      return {
        pwned: w.__pwned,
        violations: w.__violations,
        injected: document.querySelectorAll(
          'img, iframe, details, b, u, main script, body > script, svg:not(.timeline-svg):not(.graph), a[href^="javascript:"]',
        ).length,
      };
    });
    assert.deepEqual(seen, { pwned: undefined, violations: [], injected: 0 });
    assert.deepEqual(dialogs, []);
  }

  const text = async (selector: string) => (await page.locator(selector).textContent()) ?? '';

  test('the runs table shows hostile names, keys and errors as text', async () => {
    await page.goto(new URL('/runs', dashboard.url).href);
    await page.locator(`#rows tr[data-run-id="${failed}"]`).waitFor();
    const row = `#rows tr[data-run-id="${failed}"]`;
    assert.ok((await text(`${row} .workflow`)).startsWith(X.workflow));
    assert.equal(await text(`${row} .key`), X.key);
    assert.match(await text(`${row} .error-cell`), new RegExp(X.error.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    await page.fill('#f-workflow', X.workflow);
    await page.click('#apply');
    await page.waitForURL(/workflow=/);
    assert.equal(new URL(page.url()).searchParams.get('workflow'), X.workflow);
    await assertInert();
  });

  test('the run page shows every hostile string literally and runs none of them', async () => {
    await page.goto(new URL(`/runs/${failed}`, dashboard.url).href);
    await page.locator('#title .badge[data-status=failed]').waitFor();
    assert.ok((await text('#title')).startsWith(X.workflow));
    assert.equal(await text(`#steps tr[data-step="${X.step}"] .step-name`), X.step);
    assert.equal(await text(`#steps tr[data-step="${X.step}"] .result`), JSON.stringify({ html: X.output }));
    assert.match(await text(`#steps tr[data-step="${X.failingStep}"] .result`), /onerror="alert\('error'\)"/);
    assert.equal(await page.locator(`#timeline rect.bar[data-step="${X.failingStep}"]`).count(), 1);
    assert.equal(await text('#events tr td:first-child'), X.event);
    assert.equal(JSON.parse(await text('#events tr td:last-child')).note, X.payload);
    assert.equal(await text('#state tr td:first-child'), X.stateKey);
    assert.equal(JSON.parse(await text('#input')).html, X.input);
    assert.ok((await text('#result')).includes(X.error));
    assert.ok((await text('#details')).includes(X.key));
    // The drawing of what the run did (a code run's history) labels nodes with the hostile names, as text.
    const node = page.locator(`svg.graph g.graph-node[data-node="${X.step}"]`);
    assert.equal(await node.count(), 1);
    assert.ok(((await node.textContent()) ?? '').includes(X.step));
    await assertInert();

    await page.goto(new URL(`/runs/${waiting}`, dashboard.url).href);
    await page.locator('#title .badge[data-status=cancelled]').waitFor();
    assert.ok((await text('#details')).includes(X.reason));
    assert.ok((await text('#result')).includes(X.reason));
    await assertInert();
  });
});
