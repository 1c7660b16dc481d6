/**
 * A PostgreSQL server of our own for the benchmark, with the default durability (fsync on,
 * synchronous_commit on): the test provider's server runs with fsync off, which would make the
 * "one durable INSERT per step" floor meaningless. Started with initdb + postgres on a free port in
 * a temporary directory (as the `postgres` user via setpriv when we are root), stopped by its PID.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { sleep } from '../stats.js';

const execFileAsync = promisify(execFile);

export interface DurablePostgres {
  url: string;
  version: string;
  /** `fsync=on, synchronous_commit=on, wal_sync_method=...` as the server reports them. */
  settings: string;
  pid: number;
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's `bin` directory (or `CAIRN_BENCH_POSTGRES_BIN_DIR`). */
export function findBinDir(): string | undefined {
  const fromEnv = process.env['CAIRN_BENCH_POSTGRES_BIN_DIR'] ?? process.env['CAIRN_TEST_POSTGRES_BIN_DIR'];
  if (fromEnv) return fromEnv;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** The `postgres` user's ids, which the server runs as when we are root. */
export function postgresUser(): { uid: number; gid: number } | undefined {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === 'postgres' && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `cmd args` run as the `postgres` user when `user` is given (we are root), else as ourselves. */
export function asPostgres(user: { uid: number; gid: number } | undefined, cmd: string, args: string[]): [string, string[]] {
  return user ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', cmd, ...args]] : [cmd, args];
}

/** Creates `data` under `root` (owned by `user` when given) and runs initdb on it: trust auth, UTF-8, C locale, no sync. */
export async function initDataDir(bin: string, root: string, data: string, user: { uid: number; gid: number } | undefined): Promise<void> {
  mkdirSync(data, { recursive: true, mode: 0o700 });
  if (user) {
    chownSync(root, user.uid, user.gid);
    chownSync(data, user.uid, user.gid);
  }
  const [cmd, args] = asPostgres(user, join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
  await execFileAsync(cmd, args, { cwd: root, env: { ...process.env, LC_ALL: 'C' } });
}

/** The `postgres` arguments: `data`, listening on 127.0.0.1:`port` with its socket in `socketDir`, and each of `settings` as `-c`. */
export function serverArgs(data: string, port: number, socketDir: string, settings: readonly string[]): string[] {
  return ['-D', data, '-c', 'listen_addresses=127.0.0.1', '-p', String(port), '-k', socketDir, ...settings.flatMap((setting) => ['-c', setting])];
}

/** Starts the server; throws with the reason when PostgreSQL is not installed or does not start. */
export async function startDurablePostgres(log: (line: string) => void): Promise<DurablePostgres> {
  const bin = findBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found (set CAIRN_BENCH_POSTGRES_BIN_DIR)');
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? postgresUser() : undefined;
  if (asRoot && !user) throw new Error("running as root and there is no 'postgres' user to run PostgreSQL as");
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-pg-'));
  const data = join(dir, 'data');
  let child: ChildProcess | undefined;
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    await initDataDir(bin, dir, data, user);
    const port = await freePort();
    // Durability settings are left at their defaults on purpose (fsync, synchronous_commit,
    // full_page_writes all on). pg_stat_statements is preloaded so the worker-process scenario can
    // count every statement the server receives, from every process.
    const [cmd, args] = asPostgres(
      user,
      join(bin, 'postgres'),
      serverArgs(data, port, dir, ['max_connections=300', 'shared_preload_libraries=pg_stat_statements']),
    );
    const started = Date.now();
    child = spawn(cmd, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], detached: false });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}: ${stderr}`);
      try {
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
        client.on('error', () => {});
        await client.connect();
        const res = await client.query<{ v: string; f: string; s: string; m: string }>(
          "SELECT current_setting('server_version') v, current_setting('fsync') f, current_setting('synchronous_commit') s, current_setting('wal_sync_method') m",
        );
        await client.end();
        const row = res.rows[0]!;
        log(`postgres (durable): PostgreSQL ${row.v} on port ${port}, fsync=${row.f}, ready in ${Date.now() - started} ms`);
        const proc = child;
        let stopping: Promise<void> | undefined;
        return {
          url,
          version: row.v.split(' ')[0] ?? row.v,
          settings: `fsync=${row.f}, synchronous_commit=${row.s}, wal_sync_method=${row.m}`,
          pid: proc.pid ?? -1,
          stop: () =>
            (stopping ??= new Promise<void>((resolve) => {
              if (proc.exitCode !== null) return resolve();
              proc.once('exit', () => resolve());
              proc.kill('SIGINT');
            }).then(cleanup)),
        };
      } catch (error) {
        if (Date.now() - started > 60_000) throw new Error(`postgres did not become ready: ${String(error)} ${stderr}`);
        await sleep(50);
      }
    }
  } catch (error) {
    if (child && child.exitCode === null) child.kill('SIGINT');
    cleanup();
    throw error;
  }
}
