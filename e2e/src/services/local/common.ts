import { accessSync, constants, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rmSync } from 'node:fs';
import { spawnManaged, type ManagedProcess, type SpawnManagedOptions } from './process.js';
import type { RestartableServer } from './restartable.js';

/** Resolved settings that the local starters need. */
export interface LocalContext {
  env: NodeJS.ProcessEnv;
  /** When set, binaries are looked up only here. */
  binDir: string | undefined;
  ferretdbBin: string | undefined;
  startTimeoutMs: number;
  tmpDir: string;
  log: (line: string) => void;
}

/** A started, ready local server. */
export interface LocalServer {
  url: string;
  version: string;
  product: string;
  /** Product and version for humans, e.g. `PostgreSQL 15.14`. */
  label: string;
  process: ManagedProcess;
  startMs: number;
  /** Halting and restarting on the same port and data (servers started by `startOnFreePort`). */
  restart?: RestartableServer;
}

/** Thrown when the binaries for a local server are not installed: the provider skips, it does not fail. */
export class NotInstalledError extends Error {
  override name = 'NotInstalledError';
}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/**
 * Finds an executable by name: only in `ctx.binDir` when that is set, else in `extraDirs`, on PATH
 * and in the usual system directories. Returns undefined when not found.
 */
export function findBinary(ctx: LocalContext, names: string[], extraDirs: string[] = []): string | undefined {
  const dirs = ctx.binDir !== undefined ? [ctx.binDir] : [...extraDirs, ...(ctx.env['PATH'] ?? '').split(delimiter).filter(Boolean), ...SYSTEM_DIRS];
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** Describes where binaries were looked for, for skip reasons. */
export function searchedWhere(ctx: LocalContext, extraDirs: string[] = []): string {
  return ctx.binDir !== undefined ? `in CAIRN_TEST_LOCAL_BIN_DIR=${ctx.binDir}` : `in ${[...extraDirs, 'PATH', ...SYSTEM_DIRS].join(', ')}`;
}

/** PostgreSQL installs its server binaries under /usr/lib/postgresql/<major>/bin on Debian: newest first. */
export function postgresBinDirs(): string[] {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(base, v, 'bin'));
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolvePort(port) : reject(new Error('no port'))));
    });
  });
}

export function makeTempDir(ctx: LocalContext, label: string): string {
  return mkdtempSync(join(ctx.tmpDir, `cairn-${label}-`));
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `attempt` until it succeeds, the process exits, or the deadline passes. Errors name the
 * server and include the tail of its log.
 */
export async function waitReady<T>(label: string, proc: ManagedProcess, timeoutMs: number, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  let delay = 25;
  for (;;) {
    if (proc.hasExited()) {
      const { code, signal } = await proc.exited;
      throw new Error(`${label} exited during startup (code ${code}, signal ${signal}); log ${proc.logFile}:\n${proc.logTail()}`);
    }
    try {
      return await attempt();
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(`${label} was not ready after ${timeoutMs} ms (last error: ${errorText(lastError)}); log ${proc.logFile}:\n${proc.logTail()}`);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 250);
  }
}

export function errorText(error: unknown): string {
  if (error instanceof Error) {
    // AggregateError from net connect (IPv4 + IPv6) hides the useful part in `errors`.
    const inner = (error as { errors?: unknown[] }).errors;
    if (error.message === '' && Array.isArray(inner) && inner.length > 0) return inner.map(errorText).join('; ');
    return error.message || error.name;
  }
  return String(error);
}

/** Walks up from this module and from cwd looking for the built FerretDB runner. */
export function defaultFerretdbBin(): string | undefined {
  const rel = join('tools', 'ferretdb-runner', 'ferretdb-runner');
  const starts = [dirname(fileURLToPath(import.meta.url)), process.cwd()];
  for (const start of starts) {
    let dir = resolve(start);
    for (;;) {
      const candidate = join(dir, rel);
      if (isExecutable(candidate)) return candidate;
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return undefined;
}

export function defaultTmpDir(): string {
  return tmpdir();
}

export interface PortRetryOptions {
  label: string;
  dir: string;
  logFile: string;
  timeoutMs: number;
  /** What to spawn for a given port. */
  spawnFor(port: number): Omit<SpawnManagedOptions, 'dir' | 'logFile'>;
  /** One readiness attempt; throws until the server answers. */
  probe(port: number, proc: ManagedProcess): Promise<{ url: string; version: string }>;
}

/**
 * Spawns a server on a free port and waits until `probe` succeeds. If the server dies because the
 * port was taken in the meantime (a race with freePort), tries again on another port.
 */
export async function startOnFreePort(
  o: PortRetryOptions,
): Promise<{ url: string; version: string; process: ManagedProcess; port: number; spawn: SpawnManagedOptions }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const spawn: SpawnManagedOptions = { ...o.spawnFor(port), dir: o.dir, logFile: o.logFile };
    const proc = spawnManaged(spawn);
    try {
      const ready = await waitReady(`${o.label} (pid ${proc.pid}, port ${port})`, proc, o.timeoutMs, () => o.probe(port, proc));
      return { ...ready, process: proc, port, spawn };
    } catch (error) {
      lastError = error;
      const portTaken = proc.hasExited() && /bind|already in use/i.test(proc.logTail(10));
      if (!portTaken) {
        await proc.stop();
        throw error;
      }
      proc.forget();
    }
  }
  rmSync(o.dir, { recursive: true, force: true });
  throw lastError;
}

/** Removes a temp dir after a failed start (before any process owns it). */
export function removeDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // nothing more to do
  }
}
