/**
 * Outages: a PostgreSQL, MariaDB or Redis server restarted under load (PostgreSQL: fast shutdown,
 * SIGINT), with two worker processes running engines over the same database. No worker process
 * dies, every run completes with the right output, every step is recorded once, and a step body
 * succeeds again only where the history shows an attempt whose result was never recorded. Each
 * backend gets a server of its own (a local one: the test stops and starts it).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CairnError, createEngine, createMemoryStore, defineWorkflow, type EngineLogger, type RunHandle } from '@cairn/core';
import { pgBossQueue } from '../proof/deps.js';
import { parseRequire, startService, type RunningService, type ServiceName } from '../src/services/index.js';
import { prepare, runOutage } from '../outage/driver.js';
import { openStore } from '../outage/common.js';

const required = parseRequire(process.env.CAIRN_TEST_REQUIRE);
const servers = new Map<ServiceName, RunningService>();
after(async () => {
  await Promise.allSettled([...servers.values()].map((s) => s.stop()));
});

/** A restartable server of our own, or a reason to skip (a failure when the backend is required). */
async function restartable(t: { skip(reason: string): void }, name: ServiceName): Promise<RunningService | undefined> {
  const known = servers.get(name);
  if (known) return known;
  const env = { ...process.env };
  delete env[`CAIRN_TEST_${name.toUpperCase()}_URL`];
  const service = await startService(name, { env, provider: 'local' });
  if (service.skipped) {
    t.skip(service.reason);
    return undefined;
  }
  servers.set(name, service);
  if (!service.halt) {
    assert.ok(!required.has(name), `${name}: the server cannot be restarted (${service.detail})`);
    t.skip(`${name}: the server cannot be restarted`);
    return undefined;
  }
  return service;
}

describe('a server restart under load: two worker processes survive it', () => {
  for (const backend of ['postgres', 'mysql', 'redis'] as const) {
    it(backend, { timeout: 90_000 }, async (t) => {
      const service = await restartable(t, backend);
      if (!service) return;
      const report = await runOutage(backend, service, { runs: 30, restartAt: 6, downMs: 3000, timeoutMs: 55_000 });
      t.diagnostic(
        `${backend}: ${report.completed}/${report.runs} completed, down ${report.downMs} ms, wall ${report.wallMs} ms, ` +
          `bodies re-run after an interrupted attempt: ${report.explainedReruns}, worker log entries: ${report.logEntries.join(' + ')} (${report.logLines.join(' + ')} lines)`,
      );
      assert.deepEqual(report.died, [], 'no worker process dies');
      assert.equal(
        report.completed,
        report.runs,
        `every run completes; runs left:\n${report.unfinished.join('\n')}\nthe workers' last output:\n${report.logTail}`,
      );
      assert.deepEqual(report.wrongOutput, []);
      assert.deepEqual(report.badSteps, [], 'every step recorded once, succeeded');
      assert.deepEqual(report.unexplainedReruns, [], 'a body succeeds again only after an interrupted attempt');
      // Each cause once per component (engine, queue adapter), not once per failed call or retry:
      // before, one 4 s PostgreSQL restart printed about 160 entries per worker (pg-boss alone).
      for (const entries of report.logEntries) assert.ok(entries <= 20, `worker logged ${entries} entries:\n${report.logSample}`);
    });
  }
});

/** Log entries an engine wrote, by level. */
function capture(): EngineLogger & { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  return { errors, warnings, error: (_data, message) => void errors.push(message), warn: (_data, message) => void warnings.push(message) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('engine.start() while the server is down', () => {
  for (const backend of ['postgres', 'mysql', 'redis'] as const) {
    it(`${backend}: rejects with a typed error after startTimeoutMs; resolves once the server is back`, { timeout: 60_000 }, async (t) => {
      const service = await restartable(t, backend);
      if (!service) return;
      const dir = mkdtempSync(join(tmpdir(), 'cairn-start-wait-'));
      const config = await prepare(backend, service, join(dir, 'counts.tsv'));
      const workflow = defineWorkflow('start-wait', async (ctx) => ctx.step('one', async () => 1));
      await service.halt!();
      try {
        // Opening the store does not need the server (no migrations at open).
        const s = await openStore(config);
        try {
          const bounded = createEngine({ store: s.store, workflows: [workflow], startTimeoutMs: 1500, logger: capture() });
          const t0 = Date.now();
          try {
            await assert.rejects(bounded.start(), (error: unknown) => CairnError.is(error, 'STORE_ERROR') && /startTimeoutMs/.test((error as Error).message));
            const waited = Date.now() - t0;
            assert.ok(waited >= 1500 && waited < 15_000, `rejected after ${waited} ms`);
          } finally {
            await bounded.stop();
          }

          const log = capture();
          const engine = createEngine({ store: s.store, workflows: [workflow], startTimeoutMs: 30_000, logger: log });
          let settled = false;
          const starting = engine.start().finally(() => (settled = true));
          try {
            await sleep(2000);
            assert.equal(settled, false, 'start() waits while the server is down');
            await service.resume!();
            await starting;
            t.diagnostic(`${backend}: errors logged while waiting: ${JSON.stringify(log.errors)}; then: ${JSON.stringify(log.warnings)}`);
            // ioredis may hold the command in its offline queue until the server is back: then
            // nothing fails and nothing is logged. Otherwise each cause is logged once, not per retry.
            assert.ok(log.errors.length <= 3, `errors logged once per cause, not per retry: ${log.errors.length}`);
            const recoveries = log.warnings.filter((w) => /reachable again/.test(w)).length;
            assert.equal(recoveries, log.errors.length > 0 ? 1 : 0, 'the recovery is logged once');
            const run = await engine.startRun(workflow, null, { mode: 'inline' });
            assert.equal(await run.result({ timeout: '10s' }), 1);
          } finally {
            await starting.catch(() => undefined);
            await engine.stop();
          }
        } finally {
          await s.close();
        }
      } finally {
        await service.resume!();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('engine.start() while the queue is down', () => {
  it('postgres + pg-boss: rejects with QUEUE_ERROR after startTimeoutMs, and a later start() works once the server is back', { timeout: 60_000 }, async (t) => {
    const service = await restartable(t, 'postgres');
    if (!service) return;
    const { createPostgresDatabase } = await import('../src/services/index.js');
    const url = await createPostgresDatabase(service.url);
    const { createPgBossQueue } = await pgBossQueue();
    const queue = createPgBossQueue({ connectionString: url, schema: 'cairn_start_wait', pollingIntervalSeconds: 0.5, onError: () => {} });
    const workflow = defineWorkflow('queue-wait', async (ctx) => ctx.step('one', async () => 'done'));
    const engine = createEngine({ store: createMemoryStore(), queue, workflows: [workflow], startTimeoutMs: 1500, logger: capture() });
    await service.halt!();
    try {
      const t0 = Date.now();
      await assert.rejects(engine.start(), (error: unknown) => CairnError.is(error, 'QUEUE_ERROR') && /startTimeoutMs/.test((error as Error).message));
      assert.ok(Date.now() - t0 >= 1500);
      await service.resume!();
      // The failed start left nothing half-started: this one registers the workers.
      await engine.start();
      const run = await engine.startRun(workflow, null);
      assert.equal(await run.result({ timeout: '20s' }), 'done');
    } finally {
      await service.resume!();
      await engine.stop();
      await queue.close().catch(() => undefined);
    }
  });
});

describe('store wake-ups across a server restart (no distributed queue)', () => {
  for (const backend of ['postgres', 'redis'] as const) {
    it(`${backend}: a worker listening for wake-ups survives the restart, and runs started afterwards still reach it at once`, {
      timeout: 60_000,
    }, async (t) => {
      const service = await restartable(t, backend);
      if (!service) return;
      const dir = mkdtempSync(join(tmpdir(), 'cairn-wakeups-'));
      const config = await prepare(backend, service, join(dir, 'counts.tsv'));
      const workflow = defineWorkflow('wakeups', async (ctx, n: number) => ctx.step('double', async () => n * 2));
      const apiStore = await openStore(config);
      const workerStore = await openStore(config);
      assert.ok(workerStore.store.signals, `${backend} stores have wake-up signals`);
      // Recovery far beyond the bounds: only a wake-up (or the sweep after the listener came back) delivers.
      const options = { workflows: [workflow], recoveryIntervalMs: 600_000, startTimeoutMs: 30_000 };
      const api = createEngine({ ...options, store: apiStore.store, logger: capture() });
      const workerLog = capture();
      const worker = createEngine({ ...options, store: workerStore.store, logger: workerLog });
      try {
        await worker.start();
        await api.start({ workers: false });
        assert.equal(await (await api.startRun(workflow, 1)).result({ timeout: '10s' }), 2);
        await service.halt!();
        await sleep(1500);
        await service.resume!();
        // The pool reconnects on the next call; the listener on its own (at most 2 s apart).
        let started: RunHandle<number> | undefined;
        for (let i = 0; i < 50 && !started; i++) started = await api.startRun(workflow, 21).catch(async () => (await sleep(200), undefined));
        assert.ok(started, 'the API process starts runs again');
        assert.equal(await started.result({ timeout: '10s' }), 42);
        for (let i = 0; i < 3; i++) assert.equal(await (await api.startRun(workflow, i)).result({ timeout: '10s' }), i * 2);
        t.diagnostic(`${backend}: worker log during the restart: ${JSON.stringify(workerLog.errors)}`);
      } finally {
        await api.stop();
        await worker.stop();
        await apiStore.close();
        await workerStore.close();
        await service.resume!();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
