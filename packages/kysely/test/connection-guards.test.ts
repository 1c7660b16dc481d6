/**
 * guardPostgresPool / guardMysqlPool against a real server: a connection terminated by the server
 * while it is checked out of the pool (what every connection in use sees when the server restarts)
 * must not end the process, and the pool must serve the next query on a new connection. Each case
 * runs in a child process, because the unguarded PostgreSQL case does end its process (the reason
 * the guards exist: pg-pool listens for a client's 'error' only while the client is idle).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { stopSharedServices } from '@cairn/conformance/services';
import { mysqlServer, postgresServer, type SqlServer } from './support/servers.js';

const fixture = fileURLToPath(new URL('./support/terminated-connection.ts', import.meta.url));

function run(dialect: string, url: string, mode: 'bare' | 'guarded'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', fixture, dialect, url, mode], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

after(() => stopSharedServices());

for (const [dialect, server] of [
  ['postgres', await postgresServer()],
  ['mysql', await mysqlServer()],
] as [string, SqlServer][]) {
  describe(`${dialect}: a connection terminated while checked out`, { skip: server.skip }, () => {
    const url = (server as { url: string }).url;
    it('guarded: the process lives on, the error reached the handler, the pool reconnects', { timeout: 60_000 }, async () => {
      const result = await run(dialect, url, 'guarded');
      assert.equal(result.code, 0, result.stderr.slice(-2000));
      const report = JSON.parse(result.stdout.trim().split('\n').pop()!) as { alive: boolean; caught: string[] };
      assert.equal(report.alive, true);
      assert.ok(report.caught.length >= 1, `the guard saw the error: ${result.stdout}`);
    });
    if (dialect === 'postgres') {
      it('bare pg Pool: the process dies of an uncaught 57P01 (why the guard exists)', { timeout: 60_000 }, async () => {
        const result = await run(dialect, url, 'bare');
        assert.notEqual(result.code, 0);
        assert.match(result.stderr, /terminating connection due to administrator command/);
      });
    }
  });
}
