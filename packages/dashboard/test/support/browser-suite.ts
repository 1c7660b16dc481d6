// The dashboard in a real browser over a real engine: the runs table (every status, each filter,
// paging, live refresh), run pages (timeline bars, steps, waits, events, state, parent and child
// links), and cancel / pause / resume / retry / fork through the buttons and their confirmation dialogs, checked
// in the store afterwards. Run once per backend (sqlite.browser.test.ts, postgres.browser.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowStore } from '@cairn/core/backend';
import type { Browser, Page } from 'playwright-core';
import { startDashboard, type Dashboard } from '@cairn/dashboard';
import { chromiumMissing, launchChromium } from './chromium.js';
import { seedRuns, until, untilStatus, type Scenario } from './scenario.js';

/** Where the tests write screenshots (`docs/images/` holds the copies the docs show). */
export const OUTPUT_DIR = fileURLToPath(new URL('../../test-output/', import.meta.url));

export interface BrowserSuiteOptions {
  /** Opens a fresh, empty store; `close` removes it. `undefined`: the backend is unavailable. */
  open(): Promise<{ store: WorkflowStore; close(): Promise<void> }>;
  /** Why the backend cannot run (skips the suite). */
  skip?: string | false;
  /** Saves dashboard-runs.png and dashboard-run.png under OUTPUT_DIR/<name>. */
  screenshots?: boolean;
}

/** The ids of the rows the runs table shows now. */
const rowIds = (page: Page) => page.locator('#rows tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));

/** Applies filters in the form, after clearing it. */
async function filter(page: Page, fill: (page: Page) => Promise<void>): Promise<void> {
  await page.click('#clear');
  await fill(page);
  await page.click('#apply');
}

/** Waits until the table shows exactly `ids` (in any order). */
async function expectRows(page: Page, ids: string[]): Promise<void> {
  const want = [...ids].sort().join();
  await until(async () => (await rowIds(page)).sort().join() === want, `rows ${want} (have ${(await rowIds(page)).join()})`, 10_000);
}

export function browserSuite(name: string, options: BrowserSuiteOptions): void {
  const skip = options.skip || chromiumMissing();
  describe(`dashboard in Chromium on ${name}`, { skip }, () => {
    let closeStore: (() => Promise<void>) | undefined;
    let scenario: Scenario;
    let dashboard: Dashboard;
    let browser: Browser;
    let page: Page;
    let seededFrom: number;
    const shots = join(OUTPUT_DIR, name);
    const open = (path: string) => page.goto(new URL(path, dashboard.url).href);
    const runPage = async (id: string) => {
      await open(`/runs/${encodeURIComponent(id)}`);
      await page.locator('#title .badge').waitFor();
    };

    before(async () => {
      seededFrom = Date.now();
      const opened = await options.open();
      closeStore = opened.close;
      scenario = await seedRuns(opened.store);
      dashboard = await startDashboard({ engine: scenario.engine });
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      mkdirSync(shots, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await dashboard?.close();
      await scenario?.stop();
      await closeStore?.();
    });

    test('the runs table shows runs in every status and filters them', async () => {
      const { runs } = scenario;
      await open('/runs');
      const all = Object.values(runs);
      await expectRows(page, all);
      const statuses = await page.locator('#rows tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')));
      for (const status of ['completed', 'failed', 'cancelled', 'waiting', 'running']) assert.ok(statuses.includes(status), `a ${status} run is listed`);
      if (options.screenshots) await page.screenshot({ path: join(shots, 'dashboard-runs.png'), fullPage: true });

      await filter(page, (p) => p.check('input[name=status][value=failed]'));
      await expectRows(page, [runs.failed]);
      assert.match(page.url(), /status=failed/);
      await filter(page, async (p) => {
        await p.check('input[name=status][value=waiting]');
        await p.check('input[name=status][value=running]');
      });
      await expectRows(page, [runs.waitingEvent, runs.sleeping, runs.running, runs.parent, runs.child]);
      await filter(page, (p) => p.fill('#f-workflow', 'await-approval'));
      await expectRows(page, [runs.cancelled, runs.waitingEvent, runs.answered]);
      const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
      await filter(page, (p) => p.fill('#f-before', local(seededFrom - 1000)));
      await expectRows(page, []);
      assert.equal(await page.locator('#empty').isVisible(), true);
      await filter(page, (p) => p.fill('#f-after', local(seededFrom - 1000)));
      await expectRows(page, all);

      // Paging: 9 runs, 4 a page.
      await filter(page, (p) => p.fill('#f-limit', '4'));
      const pages: string[][] = [];
      for (;;) {
        // A page of the new size: right after the filter the table may still hold the 9 rows of
        // the last listing (CI's clean clone read them once as the first page, on PostgreSQL).
        await until(async () => {
          const shown = (await rowIds(page)).length;
          return shown > 0 && shown <= 4;
        }, 'a page of at most 4 runs');
        pages.push((await rowIds(page)) as string[]);
        if (await page.locator('#older').isDisabled()) break;
        const first = pages.at(-1)?.[0] as string;
        await page.click('#older');
        await until(async () => (await rowIds(page))[0] !== first, 'the next page');
      }
      assert.deepEqual(
        pages.map((p) => p.length),
        [4, 4, 1],
      );
      assert.deepEqual(new Set(pages.flat()), new Set(all));
      await page.click('#newer');
      await expectRows(page, pages[1] as string[]);
      assert.equal(await page.locator('#page').textContent(), 'Page 2');

      // Live refresh: a run started now appears without a reload.
      await filter(page, async () => {});
      const late = await scenario.engine.startRun('nightly-report', {});
      await expectRows(page, [...all, late.id]);
      await untilStatus(scenario.engine, late.id, 'waiting');
      await scenario.engine.cancel(late.id);
      await untilStatus(scenario.engine, late.id, 'cancelled');
      await page.locator(`#rows tr[data-run-id="${late.id}"][data-status=cancelled]`).waitFor();
    });

    test('the runs table filters by tags (one, several: all of them; with the status filter) and shows them; a run page lists them', async () => {
      const { runs } = scenario;
      await open('/runs');
      await filter(page, (p) => p.fill('#f-tags', 'customer=c-42'));
      await expectRows(page, [runs.completed, runs.failed]);
      assert.match(page.url(), /tag=customer%3Dc-42/);
      await filter(page, (p) => p.fill('#f-tags', 'customer=c-42, plan=pro'));
      await expectRows(page, [runs.completed]);
      assert.deepEqual(await page.locator(`#rows tr[data-run-id="${runs.completed}"] td.tags .tag`).allTextContents(), ['customer=c-42', 'plan=pro']);
      await filter(page, async (p) => {
        await p.fill('#f-tags', 'customer=c-42');
        await p.check('input[name=status][value=failed]');
      });
      await expectRows(page, [runs.failed]);
      // A hostile tag is text in its chip, never markup.
      assert.equal(await page.locator('#rows img').count(), 0);
      assert.ok((await page.locator(`#rows tr[data-run-id="${runs.failed}"] td.tags`).textContent())?.includes('x<b>=<img src=x onerror=alert(1)>'));
      // Reloaded from the address bar, the filter is the same.
      await page.reload();
      await expectRows(page, [runs.failed]);
      assert.equal(await page.locator('#f-tags').inputValue(), 'customer=c-42');
      await filter(page, (p) => p.fill('#f-tags', 'customer'));
      // The refusal comes back from the API: wait for it rather than read the alert at once.
      await until(
        async () => /key=value/.test((await page.locator('#error').textContent()) ?? ''),
        'the tag filter refused with key=value in its message',
        10_000,
      );
      await runPage(runs.completed);
      await page.locator('#details .tag').first().waitFor();
      assert.deepEqual(await page.locator('#details .tag').allTextContents(), ['customer=c-42', 'plan=pro']);
    });

    test('the runs table filters by parent run and idempotency key', async () => {
      const { runs } = scenario;
      await open('/runs');
      // Keys are unique per workflow: the key filter goes with one.
      await filter(page, async (p) => {
        await p.fill('#f-workflow', 'fulfil-order');
        await p.fill('#f-key', 'order-A-1042');
      });
      await expectRows(page, [runs.parent]);
      await filter(page, (p) => p.fill('#f-parent', runs.parent));
      await expectRows(page, [runs.child]);
    });

    test('a run page draws its timeline, steps, waits, events, state and family', async () => {
      const { runs } = scenario;
      // The failed charge: three failed attempts of reserve-funds after one validate-card.
      await open('/runs');
      await page.click(`#rows tr[data-run-id="${runs.failed}"] a.run-id >> nth=0`);
      await page.locator('#title .badge[data-status=failed]').waitFor();
      assert.match((await page.locator('#title').textContent()) ?? '', /charge-card/);
      const bars = (step: string) => page.locator(`#timeline rect.bar[data-step="${step}"]`);
      assert.equal(await bars('validate-card').count(), 1);
      assert.deepEqual(await bars('reserve-funds').evaluateAll((rects) => rects.map((r) => [r.getAttribute('data-attempt'), r.getAttribute('data-status')])), [
        ['1', 'failed'],
        ['2', 'failed'],
        ['3', 'failed'],
      ]);
      for (const rect of await bars('reserve-funds').all()) assert.ok(Number(await rect.getAttribute('width')) > 0);
      assert.deepEqual(await page.locator('#steps tr').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-step'), r.getAttribute('data-status')])), [
        ['validate-card', 'succeeded'],
        ['reserve-funds', 'failed'],
      ]);
      assert.match((await page.locator('#steps tr[data-step="reserve-funds"]').textContent()) ?? '', /card declined by issuer/);
      assert.match((await page.locator('#result').textContent()) ?? '', /card declined by issuer/);
      if (options.screenshots) await page.screenshot({ path: join(shots, 'dashboard-run.png'), fullPage: true });

      // The invoice: three steps, its state.
      await runPage(runs.completed);
      assert.equal(await page.locator('#timeline g.lane').count(), 3);
      assert.match((await page.locator('#state').textContent()) ?? '', /invoice-A-1001\.pdf.*"sent":true/);
      assert.match((await page.locator('#result').textContent()) ?? '', /"sent": true/);

      // The answered approval: the event and its payload.
      await runPage(runs.answered);
      assert.match((await page.locator('#events tr').first().textContent()) ?? '', /approval.*succeeded.*"approvedBy": "dana"/s);
      // The waiting one: waits for the event, its open wait bar.
      await runPage(runs.waitingEvent);
      assert.match((await page.locator('#waits').textContent()) ?? '', /approval/);
      assert.equal(await page.locator('#timeline rect.bar-open').count(), 1);
      // The sleeping report: a timer.
      await runPage(runs.sleeping);
      assert.match((await page.locator('#waits').textContent()) ?? '', /until-morning: timer until/);
      // The running import: an open attempt bar.
      await runPage(runs.running);
      assert.equal(await page.locator('#timeline rect.bar[data-step="write-rows"][data-status=running]').count(), 1);

      // Parent → child → parent.
      await runPage(runs.parent);
      await page.click(`#children tr[data-run-id="${runs.child}"] a`);
      await page.locator('#title .badge').waitFor();
      assert.match((await page.locator('#title').textContent()) ?? '', /ship-parcel/);
      await page.click(`#details a[href="/runs/${runs.parent}"]`);
      await page.locator('#title .badge').waitFor();
      assert.match((await page.locator('#title').textContent()) ?? '', /fulfil-order/);
    });

    test('cancelling a waiting run goes through a confirmation and cancels it in the store', async () => {
      const { engine, runs } = scenario;
      await runPage(runs.waitingEvent);
      await page.click('#cancel');
      await page.locator('dialog[open]').waitFor();
      await page.click('dialog[open] [data-dismiss]');
      await page.locator('dialog').waitFor({ state: 'detached' });
      assert.equal((await engine.getRun(runs.waitingEvent))?.status, 'waiting', 'Back cancels nothing');

      await page.click('#cancel');
      await page.fill('dialog[open] input[name=reason]', 'customer withdrew the refund');
      await page.click('dialog[open] [data-confirm]');
      await page.locator('#title .badge[data-status=cancelled]').waitFor();
      const run = await engine.getRun(runs.waitingEvent);
      assert.equal(run?.status, 'cancelled');
      assert.equal(run?.cancelReason, 'customer withdrew the refund');
      assert.equal(await page.locator('#cancel').count(), 0, 'no Cancel button on an ended run');
    });

    test('pausing a sleeping run goes through a confirmation, shows it paused, and Resume lets it go on', async () => {
      const { engine } = scenario;
      const run = await engine.startRun('nightly-report', {});
      await untilStatus(engine, run.id, 'waiting');
      await runPage(run.id);
      assert.equal(await page.locator('#resume').count(), 0, 'no Resume button on a run that is not paused');
      await page.click('#pause');
      await page.locator('dialog[open]').waitFor();
      await page.click('dialog[open] [data-dismiss]');
      await page.locator('dialog').waitFor({ state: 'detached' });
      assert.equal((await engine.getRun(run.id))?.paused, undefined, 'Back pauses nothing');

      await page.click('#pause');
      await page.fill('dialog[open] input[name=reason]', 'report mailer is down');
      await page.click('dialog[open] [data-confirm]');
      await page.locator('#title .badge[data-status=paused]').waitFor();
      const paused = await engine.getRun(run.id);
      assert.deepEqual([paused?.paused?.scope, paused?.paused?.reason], ['run', 'report mailer is down']);
      assert.match((await page.locator('#details').textContent()) ?? '', /Paused.*report mailer is down/);
      assert.equal(await page.locator('#pause').count(), 0, 'no Pause button on a paused run');
      await open('/runs');
      await page.locator(`#rows tr[data-run-id="${run.id}"] .badge[data-status=paused]`).waitFor();

      await runPage(run.id);
      await page.click('#resume');
      await page.click('dialog[open] [data-confirm]');
      await page.locator('#title .badge[data-status=waiting]').waitFor();
      assert.equal((await engine.getRun(run.id))?.paused, undefined);
      await engine.cancel(run.id);
      await untilStatus(engine, run.id, 'cancelled');
    });

    test('selecting runs in the table and acting on them: one bulk operation, only the selected runs change', async () => {
      const { engine } = scenario;
      const mine: string[] = [];
      for (let i = 0; i < 3; i += 1) mine.push((await engine.startRun('nightly-report', { bulk: i })).id);
      for (const id of mine) await untilStatus(engine, id, 'waiting');
      await open('/runs');
      await filter(page, async (p) => {
        await p.fill('#f-workflow', 'nightly-report');
        await p.check('input[name=status][value=waiting]');
      });
      await expectRows(page, [scenario.runs.sleeping, ...mine]);
      assert.equal(await page.locator('#bulk-bar').isHidden(), true, 'no action bar before a selection');
      await page.check('#select-all');
      assert.equal(await page.locator('#rows input.select:checked').count(), 4, 'select all checks every row of the page');
      assert.equal(await page.locator('#selected-count').textContent(), '4 selected');
      await page.click('#unselect');
      assert.equal(await page.locator('#rows input.select:checked').count(), 0);
      assert.equal(await page.locator('#bulk-bar').isHidden(), true);

      const chosen = [mine[0] as string, mine[2] as string];
      for (const id of chosen) await page.check(`#rows input.select[data-run-id="${id}"]`);
      assert.equal(await page.locator('#selected-count').textContent(), '2 selected');
      await page.click('[data-bulk=cancel]');
      await page.locator('dialog[open]').waitFor();
      assert.match((await page.locator('dialog[open] h3').textContent()) ?? '', /Cancel 2 run\(s\)\?/);
      await page.click('dialog[open] [data-dismiss]');
      await page.locator('dialog').waitFor({ state: 'detached' });
      assert.equal((await engine.getRun(chosen[0] as string))?.cancelRequested, false, 'Back changes nothing');

      await page.click('[data-bulk=cancel]');
      await page.fill('dialog[open] input[name=reason]', 'report retired');
      await page.click('dialog[open] [data-confirm]');
      await until(async () => (await page.locator('#bulk-result').textContent()) === 'cancel: 2 done, 0 skipped, 0 failed.', 'the bulk result', 10_000);
      for (const id of chosen) {
        await untilStatus(engine, id, 'cancelled');
        assert.equal((await engine.getRun(id))?.cancelReason, 'report retired');
      }
      for (const id of [mine[1] as string, scenario.runs.sleeping]) {
        const run = await engine.getRun(id);
        assert.deepEqual([run?.status, run?.cancelRequested], ['waiting', false], `run ${id} was not selected`);
      }
      const [operation] = await engine.listBulk({ limit: 1 });
      assert.deepEqual([operation?.action, operation?.filter.runIds, operation?.counts.done], ['cancel', chosen, 2], 'one bulk operation, stored');
      assert.equal(await page.locator('#bulk-bar').isHidden(), true, 'the selection is cleared after acting');
      if (options.screenshots) await page.screenshot({ path: join(shots, 'bulk.png') });
      await engine.cancel(mine[1] as string);
      await untilStatus(engine, mine[1] as string, 'cancelled');
    });

    test('retrying a failed run goes through a confirmation and completes it, keeping its succeeded steps', async () => {
      const { engine, runs, control } = scenario;
      await runPage(runs.failed);
      control.declines = false;
      await page.click('#retry');
      await page.click('dialog[open] [data-confirm]');
      await page.locator('#title .badge[data-status=completed]').waitFor({ timeout: 20_000 });
      const retried = await engine.getRun(runs.failed);
      assert.equal(retried?.status, 'completed');
      assert.deepEqual(
        retried?.retries?.map((r) => r.previousStatus),
        ['failed'],
      );
      assert.match((await page.locator('#details').textContent()) ?? '', /Retry 1.*from failed/);
      const history = await engine.history(runs.failed);
      assert.equal(history.filter((a) => a.stepKey === 'validate-card').length, 1, 'the succeeded step is kept, not run again');
      assert.equal(history.filter((a) => a.stepKey === 'reserve-funds' && a.status === 'succeeded').length, 1);
      assert.deepEqual(
        (await engine.steps(runs.failed)).map((s) => [s.key, s.status]),
        [
          ['validate-card', 'succeeded'],
          ['reserve-funds', 'succeeded'],
          ['capture', 'succeeded'],
        ],
      );
    });

    test('forking a run from a chosen step starts a new run that completes', async () => {
      const { engine, runs } = scenario;
      await runPage(runs.completed);
      await page.selectOption('#fork-step', 'email-customer');
      await page.click('#fork');
      await page.click('dialog[open] [data-confirm]');
      const link = page.locator('#notice a.run-id');
      await link.waitFor();
      const forked = (await link.textContent()) as string;
      assert.notEqual(forked, runs.completed);
      await untilStatus(engine, forked, 'completed');
      const run = await engine.getRun(forked);
      assert.equal(run?.workflow, 'send-invoice');
      assert.deepEqual(run?.forkedFrom, { runId: runs.completed, stepKey: 'email-customer' });
      assert.deepEqual(await engine.result(forked), { sent: true, file: 'invoice-A-1001.pdf' });
      await link.click();
      await page.locator('#title .badge[data-status=completed]').waitFor();
      assert.equal(await page.locator(`#details a[href="/runs/${runs.completed}"]`).count(), 1, 'the fork links to its source');
    });

    test('a run failed with NON_DETERMINISM shows its divergence: position, both calls, the line and the advice', async () => {
      const { engine, control } = scenario;
      const run = await engine.startRun('sign-up', { email: 'Dana@Example.com' });
      await untilStatus(engine, run.id, 'waiting');
      await runPage(run.id);
      assert.equal(await page.locator('#divergence-section').isVisible(), false, 'no divergence block for a run that did not diverge');
      control.drifted = true;
      await engine.sendEvent(run.id, 'confirmed', { ok: true });
      await untilStatus(engine, run.id, 'failed');
      await runPage(run.id);
      const block = page.locator('#divergence-section');
      assert.equal(await block.isVisible(), true);
      const text = (await block.textContent()) ?? '';
      assert.match(text, /Position#0 \(turn 0\)/);
      assert.match(text, /The history hastask “create account”/);
      assert.match(text, /The code calledtask “normalise email”/);
      assert.match(text, /Location\S*scenario\.ts:\d+:\d+/);
      assert.match(text, /guard the change with ctx\.patched\(id\), or register the new code as a new version/);
    });
  });
}
