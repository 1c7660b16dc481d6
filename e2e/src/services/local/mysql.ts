import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { restartable } from './restartable.js';
import {
  NotInstalledError,
  errorText,
  findBinary,
  makeTempDir,
  removeDir,
  searchedWhere,
  startOnFreePort,
  type LocalContext,
  type LocalServer,
} from './common.js';

const execFileAsync = promisify(execFile);

/** Name of the database created in every local server (the URL points at it). */
export const LOCAL_MYSQL_DATABASE = 'cairn';

export function findMariadb(ctx: LocalContext): { installDb: string; server: string } {
  const server = findBinary(ctx, ['mariadbd']);
  const installDb = findBinary(ctx, ['mariadb-install-db']);
  if (!server || !installDb) {
    throw new NotInstalledError(`MariaDB server binaries (mariadbd, mariadb-install-db) not found ${searchedWhere(ctx)}`);
  }
  return { installDb, server };
}

/**
 * A MariaDB server (the MySQL protocol) in a temp dir. Only MariaDB is started locally: MySQL 8
 * initialises differently; use CAIRN_TEST_MYSQL_URL or Testcontainers to test against MySQL itself.
 */
export async function startLocalMysql(ctx: LocalContext): Promise<LocalServer> {
  const started = Date.now();
  const bins = findMariadb(ctx);
  const asRoot = process.getuid?.() === 0;
  const dir = makeTempDir(ctx, 'mysql');
  try {
    const data = join(dir, 'data');
    // --no-defaults must come first: the machine's my.cnf must not leak into the test server.
    const installArgs = [
      '--no-defaults',
      `--datadir=${data}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      ...(asRoot ? ['--user=root'] : []),
    ];
    try {
      await execFileAsync(bins.installDb, installArgs, { cwd: dir, timeout: ctx.startTimeoutMs, env: ctx.env });
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string };
      throw new Error(`mariadb-install-db failed: ${errorText(error)}\n${e.stderr ?? ''}${e.stdout ?? ''}`.trimEnd(), { cause: error });
    }

    const mysql = await import('mysql2/promise');
    const probe = async (port: number): Promise<{ url: string; version: string }> => {
      const conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 2000 });
      try {
        const [rows] = await conn.query<Array<{ v: string } & import('mysql2').RowDataPacket>>('SELECT VERSION() AS v');
        await conn.query(`CREATE DATABASE IF NOT EXISTS \`${LOCAL_MYSQL_DATABASE}\``);
        return { url: `mysql://root@127.0.0.1:${port}/${LOCAL_MYSQL_DATABASE}`, version: rows[0]?.v ?? 'unknown' };
      } finally {
        await conn.end();
      }
    };
    const server = await startOnFreePort({
      label: 'MariaDB',
      dir,
      logFile: join(dir, 'server.log'),
      timeoutMs: ctx.startTimeoutMs,
      spawnFor: (port) => ({
        command: bins.server,
        args: [
          '--no-defaults',
          `--datadir=${data}`,
          `--socket=${join(dir, 's.sock')}`,
          `--pid-file=${join(dir, 'mariadbd.pid')}`,
          `--port=${port}`,
          '--bind-address=127.0.0.1',
          '--skip-log-bin',
          '--skip-name-resolve',
          '--character-set-server=utf8mb4',
          '--innodb-flush-log-at-trx-commit=0',
          '--innodb-doublewrite=0',
          '--max-connections=200',
          ...(asRoot ? ['--user=root'] : []),
        ],
        stopSignal: 'SIGTERM',
      }),
      probe,
    });
    const restart = restartable(server.process, { label: 'MariaDB', port: server.port, spawn: server.spawn, timeoutMs: ctx.startTimeoutMs, probe });
    return { ...server, product: 'MariaDB', label: `MariaDB ${server.version.split('-')[0]}`, startMs: Date.now() - started, restart };
  } catch (error) {
    removeDir(dir);
    throw error;
  }
}
