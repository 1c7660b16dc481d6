/**
 * The Testcontainers path must never hold up a test run: with DOCKER_HOST pointing at something that
 * accepts connections and never answers, the probe gives up after its timeout and the provider
 * falls through. (This file sets DOCKER_HOST for its own process only: node --test runs each file
 * in a process of its own.)
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../src/services/index.js';
import { probeContainerRuntime, resetContainerProbe } from '../src/services/testcontainers.js';

const sockets = new Set<Socket>();
const silent = createServer((socket) => {
  sockets.add(socket); // accept, read nothing, answer nothing
  socket.on('error', () => {});
});
const emptyBinDir = mkdtempSync(join(tmpdir(), 'cairn-empty-bin-'));

before(async () => {
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const address = silent.address();
  assert.ok(address && typeof address === 'object');
  process.env['DOCKER_HOST'] = `tcp://127.0.0.1:${address.port}`;
  // A test machine's own Testcontainers settings must not bypass DOCKER_HOST.
  delete process.env['TESTCONTAINERS_HOST_OVERRIDE'];
  resetContainerProbe();
  // Pay the one-off import before timing the probe (a slow import is not what is measured here).
  await import('testcontainers');
});

after(() => {
  for (const s of sockets) s.destroy();
  silent.close();
  rmSync(emptyBinDir, { recursive: true, force: true });
});

test('a silent DOCKER_HOST makes the probe give up after its timeout', { timeout: 60_000 }, async () => {
  // Without our own timeout this would never settle (the test runner's timeout would end it).
  const probe = await probeContainerRuntime(700, true);
  assert.equal(probe.ok, false);
  assert.ok(!probe.ok);
  assert.match(probe.reason, /container runtime \(DOCKER_HOST=tcp:\/\/127\.0\.0\.1:\d+\) did not answer within 700 ms/);
});

test('the provider falls through to the next step after a silent runtime', { timeout: 60_000 }, async () => {
  resetContainerProbe();
  const result = await startService('redis', {
    env: { PATH: '/nonexistent', CAIRN_TEST_LOCAL_BIN_DIR: emptyBinDir },
    probeTimeoutMs: 700,
    log: () => {},
  });
  assert.ok(result.skipped);
  assert.match(result.reason, /Testcontainers: /);
  assert.match(result.reason, /Testcontainers: container runtime .* did not answer within 700 ms/);
  assert.match(result.reason, /redis-server not found/);
});
