/**
 * Outages: a PostgreSQL, MariaDB or Redis server restarted under load (PostgreSQL: fast shutdown,
 * SIGINT), with two worker processes running engines over the same database. No worker process
 * dies, every run completes with the right output, every step is recorded once, and a step body
 * succeeds again only where the history shows an attempt whose result was never recorded. Each
 * backend gets a server of its own (a local one: the test stops and starts it).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseRequire, startService, type RunningService, type ServiceName } from '../src/services/index.js';
import { runOutage } from '../outage/driver.js';

const required = parseRequire(process.env.CAIRN_TEST_REQUIRE);
const servers: RunningService[] = [];
after(async () => {
  await Promise.allSettled(servers.map((s) => s.stop()));
});

/** A restartable server of our own, or a reason to skip (a failure when the backend is required). */
async function restartable(t: { skip(reason: string): void }, name: ServiceName): Promise<RunningService | undefined> {
  const env = { ...process.env };
  delete env[`CAIRN_TEST_${name.toUpperCase()}_URL`];
  const service = await startService(name, { env, testcontainers: false });
  if (service.skipped) {
    t.skip(service.reason);
    return undefined;
  }
  servers.push(service);
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
          `bodies re-run after an interrupted attempt: ${report.explainedReruns}, worker log lines: ${report.logLines.join(' + ')}`,
      );
      assert.deepEqual(report.died, [], 'no worker process dies');
      assert.equal(report.completed, report.runs, 'every run completes');
      assert.deepEqual(report.wrongOutput, []);
      assert.deepEqual(report.badSteps, [], 'every step recorded once, succeeded');
      assert.deepEqual(report.unexplainedReruns, [], 'a body succeeds again only after an interrupted attempt');
    });
  }
});
