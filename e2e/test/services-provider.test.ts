/**
 * The provider's decisions, without starting servers: env URLs win, a missing server skips with a
 * reason, and CAIRN_TEST_REQUIRE turns that skip into a clear failure.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  SERVICE_NAMES,
  ServiceUnavailableError,
  parseProvider,
  parseRequire,
  redactUrl,
  startService,
  summaryLine,
  uniqueName,
  freshRedisPrefix,
  type ServiceResult,
} from '../src/services/index.js';
import { liveProcessCount } from '../src/services/local/process.js';
import { providerSetting } from '../src/services/provider-setting.js';
import { containerRuntimeHint, resetContainerProbe } from '../src/services/testcontainers.js';

const emptyBinDir = mkdtempSync(join(tmpdir(), 'cairn-empty-bin-'));
after(() => rmSync(emptyBinDir, { recursive: true, force: true }));

const URLS = {
  postgres: 'postgres://u:secret@db.example.invalid:5432/app',
  mysql: 'mysql://root:pw@db.example.invalid:3306/app',
  mongodb: 'mongodb://db.example.invalid:27017/',
  redis: 'redis://db.example.invalid:6379',
} as const;

const ENV_NAMES = {
  postgres: 'CAIRN_TEST_POSTGRES_URL',
  mysql: 'CAIRN_TEST_MYSQL_URL',
  mongodb: 'CAIRN_TEST_MONGODB_URL',
  redis: 'CAIRN_TEST_REDIS_URL',
} as const;

/** A world with no Docker and no local binaries. */
function emptyWorld(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: '/nonexistent', CAIRN_TEST_LOCAL_BIN_DIR: emptyBinDir, CAIRN_TEST_TESTCONTAINERS: '0', ...extra };
}

describe('explicit URLs from the environment', () => {
  for (const name of SERVICE_NAMES) {
    test(`${name}: uses ${ENV_NAMES[name]} and starts nothing`, async () => {
      const before = liveProcessCount();
      const logs: string[] = [];
      const result = await startService(name, {
        env: emptyWorld({ [ENV_NAMES[name]]: URLS[name] }),
        log: (l) => logs.push(l),
      });
      assert.equal(result.skipped, false);
      assert.ok(!result.skipped);
      assert.equal(result.source, 'env');
      assert.equal(result.url, URLS[name]);
      assert.equal(result.pid, undefined);
      assert.equal(result.dir, undefined);
      assert.equal(liveProcessCount(), before, 'no process was started');
      await result.stop(); // a no-op for env URLs
      assert.doesNotMatch(summaryLine(result), /secret|:pw@/, 'passwords are redacted in the summary');
      assert.match(summaryLine(result), new RegExp(`^${name}: env \\(${ENV_NAMES[name]}=`));
    });
  }

  test('an env URL wins even when CAIRN_TEST_REQUIRE=all', async () => {
    const result = await startService('redis', { env: emptyWorld({ CAIRN_TEST_REDIS_URL: URLS.redis, CAIRN_TEST_REQUIRE: 'all' }), log: () => {} });
    assert.ok(!result.skipped);
    assert.equal(result.source, 'env');
  });
});

describe('no server to be had', () => {
  for (const name of SERVICE_NAMES) {
    test(`${name}: skips with a reason naming what was tried`, async () => {
      const logs: string[] = [];
      const result = await startService(name, { env: emptyWorld(), log: (l) => logs.push(l) });
      assert.equal(result.skipped, true);
      assert.ok(result.skipped);
      assert.equal(result.name, name);
      assert.match(result.reason, new RegExp(ENV_NAMES[name]));
      assert.match(result.reason, /Testcontainers disabled/);
      assert.match(result.reason, /not found/);
      assert.match(result.reason, new RegExp(emptyBinDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      assert.ok(
        logs.some((l) => l.startsWith(`${name}: skipped:`)),
        'the skip reason is printed',
      );
      assert.match(summaryLine(result), new RegExp(`^${name}: skipped \\(`));
    });
  }

  test('the FerretDB runner is looked up at CAIRN_FERRETDB_BIN when set', async () => {
    const result = await startService('mongodb', {
      env: emptyWorld({ CAIRN_FERRETDB_BIN: join(emptyBinDir, 'no-such-runner') }),
      log: () => {},
    });
    assert.ok(result.skipped);
    assert.match(result.reason, /FerretDB runner not found at .*no-such-runner \(CAIRN_FERRETDB_BIN\)/);
  });

  test('without a container runtime, the Testcontainers probe (forced on) fails fast and the provider falls through', async () => {
    // Real probe (Testcontainers enabled), but no binaries: here, with no Docker, it must skip.
    const result = await startService('redis', {
      env: { ...emptyWorld(), CAIRN_TEST_TESTCONTAINERS: '1', DOCKER_HOST: process.env['DOCKER_HOST'] },
      localBinDir: emptyBinDir,
      log: () => {},
    });
    if (!result.skipped) {
      // A machine with a container runtime: the provider used it, which is also right.
      assert.equal(result.source, 'testcontainers');
      await result.stop();
      return;
    }
    assert.match(result.reason, /Testcontainers: (no container runtime|container runtime .* did not answer)/);
  });
});

test('in auto mode, a machine with no runtime configured is answered without loading testcontainers', async (t) => {
  if (containerRuntimeHint() !== undefined) {
    t.skip(`a container runtime is configured here (${containerRuntimeHint()})`);
    return;
  }
  resetContainerProbe(); // another test forced a real probe; its answer is cached per process
  const result = await startService('redis', { env: { PATH: '/nonexistent', CAIRN_TEST_LOCAL_BIN_DIR: emptyBinDir }, log: () => {} });
  assert.ok(result.skipped);
  // This reason is only given before any import of testcontainers.
  assert.match(result.reason, /Testcontainers: no container runtime configured/);
});

describe('CAIRN_TEST_REQUIRE', () => {
  for (const require of ['all', 'postgres', 'redis,postgres', ' Postgres , mongo ', 'pg']) {
    test(`CAIRN_TEST_REQUIRE=${JSON.stringify(require)} makes a missing postgres an error`, async () => {
      await assert.rejects(startService('postgres', { env: emptyWorld({ CAIRN_TEST_REQUIRE: require }), log: () => {} }), (error: unknown) => {
        assert.ok(error instanceof ServiceUnavailableError);
        assert.equal(error.service, 'postgres');
        assert.match(error.message, /requires postgres, but no server could be had/);
        assert.match(error.message, /CAIRN_TEST_POSTGRES_URL is not set/);
        assert.match(error.message, /initdb/);
        return true;
      });
    });
  }

  test('a backend not named is still skipped', async () => {
    const result = await startService('mysql', { env: emptyWorld({ CAIRN_TEST_REQUIRE: 'postgres,redis' }), log: () => {} });
    assert.ok(result.skipped);
  });

  test('parseRequire: all, aliases, empty, and unknown names', () => {
    assert.deepEqual([...parseRequire('all')].sort(), [...SERVICE_NAMES].sort());
    assert.deepEqual([...parseRequire('mariadb, MONGO,redis')].sort(), ['mongodb', 'mysql', 'redis']);
    assert.deepEqual([...parseRequire('')], []);
    assert.deepEqual([...parseRequire(undefined)], []);
    assert.throws(() => parseRequire('postgress'), /unknown backend "postgress"/);
  });

  test('a typo in CAIRN_TEST_REQUIRE fails the run instead of skipping silently', async () => {
    await assert.rejects(startService('redis', { env: emptyWorld({ CAIRN_TEST_REQUIRE: 'rediss' }), log: () => {} }), /unknown backend/);
  });
});

describe('CAIRN_TEST_PROVIDER', () => {
  test('providerSetting: CAIRN_TEST_CONFORMANCE_PROVIDER only for a conformance file, and only when set', () => {
    const env = { CAIRN_TEST_PROVIDER: 'local', CAIRN_TEST_CONFORMANCE_PROVIDER: 'testcontainers' };
    assert.deepEqual(providerSetting(env, '/repo/packages/kysely/test/postgres.conformance.ts'), {
      variable: 'CAIRN_TEST_CONFORMANCE_PROVIDER',
      value: 'testcontainers',
    });
    assert.deepEqual(providerSetting(env, '/repo/e2e/dist/x.conformance.js'), { variable: 'CAIRN_TEST_CONFORMANCE_PROVIDER', value: 'testcontainers' });
    assert.deepEqual(providerSetting(env, '/repo/packages/kysely/test/postgres.test.ts'), { variable: 'CAIRN_TEST_PROVIDER', value: 'local' });
    assert.deepEqual(providerSetting(env, undefined), { variable: 'CAIRN_TEST_PROVIDER', value: 'local' });
    assert.deepEqual(providerSetting({ CAIRN_TEST_PROVIDER: 'local', CAIRN_TEST_CONFORMANCE_PROVIDER: '' }, '/x/a.conformance.ts'), {
      variable: 'CAIRN_TEST_PROVIDER',
      value: 'local',
    });
    assert.throws(() => parseProvider('docker', 'CAIRN_TEST_CONFORMANCE_PROVIDER'), /CAIRN_TEST_CONFORMANCE_PROVIDER: unknown provider "docker"/);
  });

  test('parseProvider: auto by default, the two single sources, and unknown names', () => {
    assert.equal(parseProvider(undefined), 'auto');
    assert.equal(parseProvider(''), 'auto');
    assert.equal(parseProvider(' Testcontainers '), 'testcontainers');
    assert.equal(parseProvider('local'), 'local');
    assert.throws(() => parseProvider('docker'), /CAIRN_TEST_PROVIDER: unknown provider "docker"/);
  });

  test('a typo fails the run instead of choosing a source', async () => {
    await assert.rejects(startService('redis', { env: emptyWorld({ CAIRN_TEST_PROVIDER: 'testcontainer' }), log: () => {} }), /unknown provider/);
  });

  test('local: the env URL and Testcontainers are not used', async () => {
    const result = await startService('redis', {
      env: emptyWorld({ CAIRN_TEST_PROVIDER: 'local', CAIRN_TEST_TESTCONTAINERS: '1', CAIRN_TEST_REDIS_URL: URLS.redis }),
      log: () => {},
    });
    assert.ok(result.skipped, 'the URL was not used, and no local redis-server is in the empty bin dir');
    assert.match(result.reason, /CAIRN_TEST_PROVIDER=local/);
    assert.match(result.reason, /Testcontainers not used \(CAIRN_TEST_PROVIDER=local\)/);
    assert.match(result.reason, /redis-server not found/);
  });

  test('testcontainers: with no container runtime, a required backend fails even where a local server could start', async (t) => {
    if (containerRuntimeHint() !== undefined) {
      t.skip(`a container runtime is configured here (${containerRuntimeHint()})`);
      return;
    }
    resetContainerProbe();
    // No empty bin dir: a local redis-server would start in `auto` mode. It must not be used.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      CAIRN_TEST_PROVIDER: 'testcontainers',
      CAIRN_TEST_REQUIRE: 'redis',
      CAIRN_TEST_REDIS_URL: URLS.redis,
    };
    const before = liveProcessCount();
    await assert.rejects(startService('redis', { env, log: () => {} }), (error: unknown) => {
      assert.ok(error instanceof ServiceUnavailableError);
      assert.match(error.message, /CAIRN_TEST_PROVIDER=testcontainers/);
      assert.match(error.message, /Testcontainers: no container runtime/);
      assert.match(error.message, /local servers not used \(CAIRN_TEST_PROVIDER=testcontainers\)/);
      return true;
    });
    assert.equal(liveProcessCount(), before, 'no local server was started');
  });
});

describe('helpers', () => {
  test('summaryLine names the backend and the source', () => {
    const running: ServiceResult = {
      skipped: false,
      name: 'postgres',
      url: 'postgres://postgres@127.0.0.1:5/postgres',
      source: 'local',
      detail: 'PostgreSQL 15.14, /tmp/x, started in 1.2 s',
      stop: async () => {},
    };
    assert.equal(summaryLine(running), 'postgres: local (PostgreSQL 15.14, /tmp/x, started in 1.2 s)');
    assert.equal(summaryLine({ skipped: true, name: 'redis', reason: 'nothing' }), 'redis: skipped (nothing)');
  });

  test('redactUrl hides passwords', () => {
    assert.equal(redactUrl('postgres://u:secret@h:1/db'), 'postgres://u:***@h:1/db');
    assert.equal(redactUrl('redis://h:6379'), 'redis://h:6379');
  });

  test('uniqueName and freshRedisPrefix are unique and safe identifiers', () => {
    const names = new Set(Array.from({ length: 200 }, () => uniqueName('My-Test')));
    assert.equal(names.size, 200);
    for (const n of names) assert.match(n, /^[a-z][a-z0-9_]{0,47}$/);
    assert.match(freshRedisPrefix(), /^cairn_[a-z0-9_]+:$/);
  });
});
