// The CLI against SQLite (embedded: also runs under Node 22 in `test:embedded`), by --url and by
// config file; and what does not depend on the backend: --help, usage errors, connection errors.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { openSqliteStore } from '@cairn/kysely';
import { cliCases } from './support/cli-cases.js';
import { sqliteTarget } from './support/sqlite-target.js';
import { runCairn, startCairn } from './support/run-cairn.js';
import { seedRuns } from './support/seed-runs.js';

cliCases(sqliteTarget('cairn-cli-sqlite-'));

const COMMAND_NAMES = [
  'runs',
  'show',
  'tail',
  'cancel',
  'pause',
  'resume',
  'retry',
  'fork',
  'delete',
  'bulk',
  'prune',
  'schedules',
  'versions',
  'check',
  'export',
  'dashboard',
];
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

describe('cairn: help, connection and config', () => {
  let scratch = '';
  let db = '';
  let completed = '';
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'cairn-cli-config-'));
    db = join(scratch, 'cairn.sqlite');
    const store = await openSqliteStore(db, { migrate: true });
    try {
      completed = (await seedRuns(store)).byStatus.completed;
    } finally {
      await store.close();
    }
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('--help on the program and on every command: usage, options, exit 0', async () => {
    const top = await runCairn(['--help']);
    assert.equal(top.code, 0, top.stderr);
    for (const name of COMMAND_NAMES) assert.match(top.stdout, new RegExp(`^  ${name}\\b`, 'm'));
    assert.match(top.stdout, /Exit codes: 0 ok/);
    for (const name of COMMAND_NAMES) {
      const help = await runCairn([name, '--help']);
      assert.equal(help.code, 0, `${name} --help: ${help.stderr}`);
      assert.match(help.stdout, new RegExp(`^Usage: cairn ${name}\\b`, 'm'));
      assert.match(help.stdout, /-h, --help/);
    }
    const viaHelp = await runCairn(['help', 'show']);
    assert.equal(viaHelp.code, 0);
    assert.match(viaHelp.stdout, /^Usage: cairn show/m);
  });

  it('no store, an unknown scheme, a missing SQLite file: exit 2 with the reason, and no file is created', async () => {
    const none = await runCairn(['runs'], { cwd: scratch });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /No store: pass --url/);
    const scheme = await runCairn(['runs', '--url', 'ftp://example']);
    assert.equal(scheme.code, 2);
    assert.match(scheme.stderr, /unknown scheme; use one of postgres:\/\//);
    const missing = join(scratch, 'typo.sqlite');
    const typo = await runCairn(['runs', '--url', `sqlite:${missing}`]);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /No SQLite database at/);
    assert.equal(existsSync(missing), false);
    const both = await runCairn(['runs', '--url', `sqlite:${db}`, '--config', 'x.ts']);
    assert.equal(both.code, 2);
  });

  it('dispatch: a bad --limit (no workflow, not a positive integer, a workflow twice) exits 2 before it dispatches', async () => {
    const env = { CAIRN_SECRET: 'dispatch-secret-0123456789' };
    const base = ['--url', `sqlite:${db}`, 'dispatch', '--target', 'http://127.0.0.1:9/api/cairn', '--secret-env', 'CAIRN_SECRET'];
    for (const [limits, reason] of [
      [['--limit', '=2'], /--limit takes workflow=N/],
      [['--limit', 'order=0'], /--limit order must be a positive integer/],
      [['--limit', 'order=2', '--limit', 'order=3'], /--limit names "order" twice/],
    ] as const) {
      const result = await runCairn([...base, ...limits], { env });
      assert.equal(result.code, 2, `${limits.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, reason);
      assert.doesNotMatch(result.stdout, /Dispatching/);
    }
  });

  it('a cairn.config.ts: found in the working directory, or named by --config; CAIRN_URL works like --url', async () => {
    const env = { CAIRN_TEST_SQLITE: db };
    const found = await runCairn(['show', completed], { cwd: FIXTURES, env });
    assert.equal(found.code, 0, found.stderr);
    assert.match(found.stdout, /COMPLETED/);
    const named = await runCairn(['--config', join(FIXTURES, 'cairn.config.ts'), 'runs', '--json'], { env });
    assert.equal(named.code, 0, named.stderr);
    assert.equal((JSON.parse(named.stdout) as { runs: unknown[] }).runs.length, 8);
    const byEnv = await runCairn(['runs', '--status', 'completed', '--json'], { env: { CAIRN_URL: `sqlite:${db}` } });
    assert.equal(byEnv.code, 0, byEnv.stderr);
    assert.equal((JSON.parse(byEnv.stdout) as { runs: unknown[] }).runs.length, 2);
    const bad = await runCairn(['--config', join(FIXTURES, 'no-store.config.ts'), 'runs']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /must export a store/);
  });

  it('dashboard: serves @cairn/dashboard over the store, with the token it is given; stops on SIGTERM with exit 0', async () => {
    const token = 'a-token-of-32-characters-exactly';
    const child = startCairn(['dashboard', '--url', `sqlite:${db}`, '--port', '0'], { env: { CAIRN_DASHBOARD_TOKEN: token } });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const url = await new Promise<URL>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          const m = /^Cairn dashboard on (\S+)/m.exec(out);
          if (m) resolve(new URL(m[1] as string));
        });
        child.on('close', () => reject(new Error(`cairn dashboard exited:\n${out}\n${err}`)));
      });
      assert.equal(url.hostname, '127.0.0.1');
      assert.equal(url.searchParams.get('token'), token);
      const refused = await fetch(new URL('/api/runs', url));
      assert.equal(refused.status, 401);
      const answer = await fetch(new URL('/api/runs', url), { headers: { authorization: `Bearer ${token}` } });
      assert.equal(answer.status, 200);
      const body = (await answer.json()) as { runs: { id: string }[] };
      assert.ok(body.runs.some((r) => r.id === completed));
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, err);
  });

  it('dashboard: a non-loopback host without --allow-remote and a token is refused (exit 2), nothing served', async () => {
    const result = await runCairn(['dashboard', '--url', `sqlite:${db}`, '--host', '0.0.0.0', '--port', '0']);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /not a loopback address/);
  });
});
