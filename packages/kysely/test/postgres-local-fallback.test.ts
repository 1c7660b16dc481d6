// The local-binary path of the test-server provider, on its own: no container runtime answers
// (DOCKER_HOST names a socket that does not exist), the provider runs in its default `auto` mode
// with no URL, so it must fall back to a PostgreSQL started from the local binaries; two
// conformance groups then pass on it. CI runs the conformance suite itself through Testcontainers,
// so without this file the fallback would go untested there. (node --test runs each file in a
// process of its own: the environment set here is this file's only.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runConformance } from '@cairn/conformance';
import { probeContainerRuntime, startService, summaryLine } from '@cairn/conformance/services';
import { sqlHarness } from './support/harness.js';

process.env['DOCKER_HOST'] = 'unix:///nonexistent/cairn-no-container-runtime.sock';
delete process.env['TESTCONTAINERS_HOST_OVERRIDE'];
delete process.env['CAIRN_TEST_POSTGRES_URL'];
delete process.env['CAIRN_TEST_PROVIDER'];
delete process.env['CAIRN_TEST_TESTCONTAINERS'];

// A machine with a Docker socket in a usual place still has a runtime (Testcontainers tries those
// after DOCKER_HOST): there the fallback cannot be shown, and this file skips.
const probe = await probeContainerRuntime(2000, true);
const runtime = probe.ok ? 'a container runtime answers here despite DOCKER_HOST' : undefined;
const server = runtime ? undefined : await startService('postgres');

test('with no container runtime, the provider falls back to a local PostgreSQL', { skip: runtime }, () => {
  assert.ok(!probe.ok);
  assert.match(probe.reason, /no container runtime/);
  assert.ok(server);
  if (server.skipped) {
    // Only where PostgreSQL is not installed and not required (CAIRN_TEST_REQUIRE makes it throw above).
    return;
  }
  assert.equal(server.source, 'local', summaryLine(server));
  assert.match(server.detail, /^PostgreSQL 1\d/);
  console.log(`# ${summaryLine(server)}`);
});

if (!server || server.skipped) {
  test('conformance on the local fallback', { skip: runtime ?? `no PostgreSQL: ${server?.skipped ? server.reason : ''}` }, () => {});
} else {
  runConformance(sqlHarness('postgres', { url: server.url, source: `${server.source}: ${server.detail}` }), {
    only: ['store.state', 'engine.replay'],
  });
  test.after(() => server.stop());
}
