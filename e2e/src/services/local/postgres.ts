import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { restartable } from './restartable.js';
import {
  NotInstalledError,
  errorText,
  findBinary,
  makeTempDir,
  postgresBinDirs,
  removeDir,
  searchedWhere,
  startOnFreePort,
  type LocalContext,
  type LocalServer,
} from './common.js';

const execFileAsync = promisify(execFile);

interface RunAs {
  uid: number;
  gid: number;
  /** Command prefix that drops to the user (setpriv execs, so the PID we hold is the server's). */
  prefix: string[];
}

function lookupUser(name: string): { uid: number; gid: number } | undefined {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [user, , uid, gid] = line.split(':');
      if (user === name && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
    }
  } catch {
    // no /etc/passwd
  }
  return undefined;
}

/** initdb and postgres refuse to run as root: as root, run them as the `postgres` user via setpriv. */
function runAs(ctx: LocalContext): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const user = lookupUser('postgres');
  if (!user) throw new NotInstalledError("running as root and there is no 'postgres' user to run PostgreSQL as");
  const setpriv = findBinary({ ...ctx, binDir: undefined }, ['setpriv']);
  if (!setpriv) throw new NotInstalledError('running as root and setpriv (util-linux) is not installed');
  return { ...user, prefix: [setpriv, '--reuid=postgres', '--regid=postgres', '--init-groups'] };
}

export function findPostgres(ctx: LocalContext): { initdb: string; postgres: string } {
  const dirs = ctx.env['CAIRN_TEST_POSTGRES_BIN_DIR'] ? [ctx.env['CAIRN_TEST_POSTGRES_BIN_DIR']] : postgresBinDirs();
  const initdb = findBinary(ctx, ['initdb'], dirs);
  const postgres = initdb ? findBinary({ ...ctx, binDir: join(initdb, '..') }, ['postgres']) : undefined;
  if (!initdb || !postgres) {
    throw new NotInstalledError(`PostgreSQL server binaries (initdb, postgres) not found ${searchedWhere(ctx, dirs)}`);
  }
  return { initdb, postgres };
}

export async function startLocalPostgres(ctx: LocalContext): Promise<LocalServer> {
  const started = Date.now();
  const bins = findPostgres(ctx);
  const user = runAs(ctx);
  const dir = makeTempDir(ctx, 'postgres');
  try {
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o700 });
    if (user) {
      chownSync(dir, user.uid, user.gid);
      chownSync(data, user.uid, user.gid);
    }
    const cmd = (bin: string, args: string[]): { command: string; args: string[] } =>
      user ? { command: user.prefix[0]!, args: [...user.prefix.slice(1), bin, ...args] } : { command: bin, args };

    const init = cmd(bins.initdb, ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    try {
      await execFileAsync(init.command, init.args, { cwd: dir, timeout: ctx.startTimeoutMs, env: { ...ctx.env, LC_ALL: 'C' } });
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string };
      throw new Error(`initdb failed: ${errorText(error)}\n${e.stderr ?? ''}${e.stdout ?? ''}`.trimEnd(), { cause: error });
    }

    const { default: pg } = await import('pg');
    const probe = async (port: number): Promise<{ url: string; version: string }> => {
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
      client.on('error', () => {});
      await client.connect();
      try {
        // The server on the port must be this one: after a restart (resume) another process may
        // have taken the port while it was down, and its server would answer the probe instead.
        const served = await client.query<{ data_directory: string }>('SHOW data_directory');
        const servedDir = served.rows[0]?.data_directory;
        if (servedDir !== data) throw new Error(`port ${port} is served by another PostgreSQL (data directory ${servedDir}, not ${data})`);
        const res = await client.query<{ server_version: string }>('SHOW server_version');
        return { url, version: res.rows[0]?.server_version.split(' ')[0] ?? 'unknown' };
      } finally {
        await client.end();
      }
    };
    const server = await startOnFreePort({
      label: 'PostgreSQL',
      dir,
      logFile: join(dir, 'server.log'),
      timeoutMs: ctx.startTimeoutMs,
      spawnFor: (port) => ({
        ...cmd(bins.postgres, [
          '-D',
          data,
          '-c',
          'listen_addresses=127.0.0.1',
          '-p',
          String(port),
          '-k',
          dir,
          '-c',
          'fsync=off',
          '-c',
          'synchronous_commit=off',
          '-c',
          'full_page_writes=off',
          '-c',
          'max_connections=200',
        ]),
        stopSignal: 'SIGINT', // fast shutdown
      }),
      probe,
    });
    const restart = restartable(server.process, { label: 'PostgreSQL', port: server.port, spawn: server.spawn, timeoutMs: ctx.startTimeoutMs, probe });
    return { ...server, product: 'PostgreSQL', label: `PostgreSQL ${server.version}`, startMs: Date.now() - started, restart };
  } catch (error) {
    removeDir(dir);
    throw error;
  }
}
