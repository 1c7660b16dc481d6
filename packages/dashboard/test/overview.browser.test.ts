// The overview page (the dashboard's home figures) over an engine on SQLite whose clock placed runs
// over the last 30 hours: `/api/overview` counts exactly the runs made (per workflow, hour and
// outcome; run times; failures by code; the backlog), and the page in a real browser shows them.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createEngine, defineWorkflow, NonRetryableError, type Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';
import { openSqliteStore } from '@cairn/kysely';
import type { Browser, Page } from 'playwright-core';
import { startDashboard, type Dashboard, type Overview } from '@cairn/dashboard';
import { OUTPUT_DIR } from './support/browser-suite.js';
import { chromiumMissing, launchChromium } from './support/chromium.js';
import { until, untilStatus } from './support/scenario.js';

const HOUR = 3_600_000;
const quiet = { warn: () => {}, error: () => {} };

// Each run takes `ms` of the engine's clock (a sleep), then completes or fails as told: in its step
// (the run fails with STEP_FAILED) or in the workflow's own code (with the code it threw).
const charge = defineWorkflow('charge', async (ctx, input: { ms: number; fail?: 'step' | 'body' }) => {
  await ctx.sleep('work', input.ms);
  if (input.fail === 'body') throw Object.assign(new NonRetryableError('the order is invalid'), { code: 'ORDER_INVALID' });
  return ctx.step('charge', () => {
    if (input.fail === 'step') throw new NonRetryableError('declined');
    return 'ok';
  });
});
// Registered on no worker here: its run stays pending, due.
const importer = defineWorkflow('import', async () => 'imported');
const ship = defineWorkflow('ship', async (ctx) => {
  await ctx.sleep('wait for the truck', '2d');
  return 'shipped';
});

describe('dashboard overview in Chromium on SQLite', { skip: chromiumMissing() }, () => {
  let dir = '';
  let store: WorkflowStore;
  let clock: ManualClock;
  let engine: Engine;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;
  const made: Record<string, string> = {};

  /** Starts a run at `at` (engine clock) and lets it reach `status`. */
  async function runAt(at: number, name: string, start: () => Promise<{ id: string }>, status: 'completed' | 'failed' | 'waiting'): Promise<void> {
    await clock.set(at);
    const { id } = await start();
    made[name] = id;
    for (let i = 0; i < 500 && (await store.runs.get(id))?.status !== status; i++) {
      // A sleeping run wakes when the clock reaches its timer; anything else needs a moment.
      if (status !== 'waiting' && (await store.runs.get(id))?.status === 'waiting') await clock.advanceToNextTimer();
      else await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await untilStatus(engine, id, status);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-dashboard-overview-'));
    store = await openSqliteStore(join(dir, 'runs.sqlite'), { migrate: true });
    // The page reads Date.now(): the runs are placed relative to it.
    const now = Date.now();
    clock = new ManualClock({ start: now - 30 * HOUR });
    engine = createEngine({ store, workflows: [charge, ship], clock, logger: quiet, recoveryIntervalMs: 1e12 });
    await engine.start();
    // 30 h ago: outside the day. 20 h ago: a run of 1 min, and the shipment that waits since.
    await runAt(now - 30 * HOUR, 'old', () => engine.startRun(charge, { ms: 60_000 }), 'completed');
    await runAt(now - 20 * HOUR, 'day1', () => engine.startRun(charge, { ms: 60_000 }), 'completed');
    await runAt(now - 20 * HOUR + 1000, 'ship', () => engine.startRun(ship, null), 'waiting');
    // 5 h ago: a run of 3 min and a failure. 30 min ago: 2 s, 4 s and a failure of another code.
    await runAt(now - 5 * HOUR, 'day2', () => engine.startRun(charge, { ms: 180_000 }), 'completed');
    await runAt(now - 5 * HOUR + 10_000, 'fail1', () => engine.startRun(charge, { ms: 1000, fail: 'step' }), 'failed');
    await runAt(now - HOUR / 2, 'hour1', () => engine.startRun(charge, { ms: 2000 }), 'completed');
    await runAt(now - HOUR / 2 + 10_000, 'hour2', () => engine.startRun(charge, { ms: 4000 }), 'completed');
    await runAt(now - HOUR / 2 + 20_000, 'fail2', () => engine.startRun(charge, { ms: 1000, fail: 'body' }), 'failed');
    // A start made by a client (an engine never started) for a workflow no worker here knows.
    await clock.set(now - 10 * 60_000);
    made.pending = (await createEngine({ store, workflows: [importer], clock, logger: quiet }).startRun(importer, null)).id;
    await clock.set(now);
    dashboard = await startDashboard({ engine });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  });
  after(async () => {
    await browser?.close();
    await dashboard?.close();
    await engine?.stop();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('/api/overview counts the runs of the last day per workflow, hour and outcome, their run times, failures by code and the backlog', async () => {
    const response = await fetch(new URL('/api/overview', dashboard.url));
    assert.equal(response.status, 200);
    const data = (await response.json()) as Overview;
    assert.deepEqual(
      data.workflows.map((w) => [w.workflow, w.lastHour, w.lastDay]),
      [
        ['charge', { started: 3, completed: 2, failed: 1, cancelled: 0 }, { started: 6, completed: 4, failed: 2, cancelled: 0 }],
        ['import', { started: 1, completed: 0, failed: 0, cancelled: 0 }, { started: 1, completed: 0, failed: 0, cancelled: 0 }],
        ['ship', { started: 0, completed: 0, failed: 0, cancelled: 0 }, { started: 1, completed: 0, failed: 0, cancelled: 0 }],
      ],
    );
    const [chargeRow] = data.workflows;
    assert.equal(chargeRow?.hours.length, 24);
    assert.equal(
      chargeRow?.hours.reduce((n, hour) => n + hour.started, 0),
      6,
      'every run of the day in an hour of the chart (the oldest hour starts after the day does: 20 h ago is inside it)',
    );
    // The last half hour's three runs lie in the chart's last two hours (which, depends on the minute).
    const recent = chargeRow?.hours.filter((hour) => hour.start >= data.now - 2 * HOUR) ?? [];
    assert.deepEqual(
      {
        started: recent.reduce((n, hour) => n + hour.started, 0),
        completed: recent.reduce((n, hour) => n + hour.completed, 0),
        failed: recent.reduce((n, hour) => n + hour.failed, 0),
      },
      { started: 3, completed: 2, failed: 1 },
    );
    // Creation to completion: 1 min, 3 min, 2 s, 4 s (each its sleep, the step adds nothing on this clock).
    assert.deepEqual(chargeRow?.durationMs, { p50: 4000, p95: 180_000, of: 4 });
    assert.deepEqual(
      data.failures.map((f) => [f.code, f.count, f.workflows]),
      [
        ['ORDER_INVALID', 1, ['charge']],
        ['STEP_FAILED', 1, ['charge']],
      ],
    );
    const failed = await engine.getRun(made.fail2 as string);
    assert.equal(failed?.error?.code, 'ORDER_INVALID', 'the code shown is the run error’s own');
    assert.equal((await engine.getRun(made.pending as string))?.status, 'pending');
    assert.equal(data.backlog.waiting, 1);
    assert.equal(data.backlog.due, 1, 'the pending run is due; the sleeping shipment is not');
    assert.deepEqual(data.backlog.oldestWaiting, { runId: made.ship, workflow: 'ship', createdAt: (await engine.getRun(made.ship as string))?.createdAt });
    assert.equal(data.truncated, false);
  });

  test('the overview page shows the figures, the hourly chart and links to the filtered runs table', async () => {
    // The dashboard's home; /overview is the same page.
    await page.goto(dashboard.url);
    const row = page.locator('#workflow-rows tr[data-workflow="charge"]');
    await until(async () => (await row.count()) === 1, 'the charge row');
    assert.equal(await row.locator('.last-hour .counts').getAttribute('data-started'), '3');
    assert.equal(await row.locator('.last-day .counts').textContent(), '6 started · 4 completed · 2 failed');
    assert.equal(await row.locator('.durations').textContent(), '4.0 s / 3 min 0 s (4)');
    assert.equal(await row.locator('svg.hours rect.bar-completed').count(), 3, 'completed bars in three hours');
    assert.equal(await row.locator('svg.hours rect.bar-failed').count(), 2);
    assert.equal(await page.locator('#due').getAttribute('data-value'), '1');
    assert.equal(await page.locator('#waiting').getAttribute('data-value'), '1');
    assert.equal(await page.locator('#oldest a.run-id').textContent(), made.ship);
    assert.deepEqual(await page.locator('#failure-rows tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-code'))), [
      'ORDER_INVALID',
      'STEP_FAILED',
    ]);
    mkdirSync(OUTPUT_DIR, { recursive: true });
    await page.screenshot({ path: join(OUTPUT_DIR, 'dashboard-overview.png'), fullPage: true });
    // A failure's workflow link opens the runs table filtered on it and on failed.
    await page.locator('#failure-rows tr[data-code="ORDER_INVALID"] a').click();
    await until(async () => (await page.locator('#rows tr').count()) === 2, 'the failed charge runs');
    assert.deepEqual(
      (await page.locator('#rows tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')))).sort(),
      [made.fail1, made.fail2].sort(),
    );
  });
});
