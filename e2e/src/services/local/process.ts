/**
 * Starting and, above all, reliably stopping local server processes.
 *
 * Every server started here is recorded in a process-wide registry. It is stopped (by PID) and its
 * temp dir removed when:
 *  - the caller calls `stop()` (graceful signal, wait for exit, SIGKILL after a timeout, rm -rf);
 *  - the test process gets SIGINT or SIGTERM (same, then the signal is re-raised if nobody else
 *    handles it);
 *  - the test process exits ('exit' handler: synchronous kill + best-effort rm);
 *  - the test process dies without running any handler (SIGKILL, crash): a tiny `sh` watchdog per
 *    server holds the read end of a pipe from us; when the pipe closes it kills the server by PID,
 *    waits for it to go and removes the temp dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';

export interface ManagedProcess {
  readonly pid: number;
  readonly child: ChildProcess;
  readonly dir: string;
  readonly logFile: string;
  /** Resolves when the process has exited (and been reaped). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True once the process has exited. */
  hasExited(): boolean;
  /** Last lines of the server's log. */
  logTail(lines?: number): string;
  /** Graceful stop: signal, wait (up to `timeoutMs`), SIGKILL, remove temp dir. Idempotent. */
  stop(timeoutMs?: number): Promise<void>;
  /** For a process that has already exited: stop watching it, but keep its temp dir (to retry in it). */
  forget(): void;
  /**
   * Stops the server like `stop()` (graceful signal, SIGKILL after `timeoutMs`) but keeps its temp
   * dir, so it can be started again on the same data (see `restartable`). Resolves once it exited.
   */
  halt(timeoutMs?: number): Promise<void>;
}

export interface SpawnManagedOptions {
  command: string;
  args: string[];
  /** Temp dir owned by this server; removed on stop. */
  dir: string;
  /** Log file (stdout/stderr of the server unless `stdout: 'pipe'`). */
  logFile: string;
  /** Signal for a graceful stop (postgres: SIGINT is a fast shutdown). Default SIGTERM. */
  stopSignal?: NodeJS.Signals;
  /** Pipe stdout to the caller instead of the log (FerretDB prints its URI there). */
  stdout?: 'log' | 'pipe';
  /** Give the child a stdin pipe that we hold open (for `-exit-on-stdin-eof`). */
  stdinPipe?: boolean;
  env?: NodeJS.ProcessEnv;
}

const live = new Set<ManagedProcess>();
let handlersInstalled = false;

const WATCHDOG = [
  // $1: server pid, $2: signal name without SIG (dash's kill -s wants TERM, not SIGTERM), $3: dir to remove.
  'read -r _ignored || true',
  // Only the server itself: one that died on its own may have left its pid to another process
  // (pid_max is 32768 on some machines, and a CI run spawns thousands). Every server runs in (or
  // below: PostgreSQL moves to its data directory) its temp dir, which no other process does.
  'mine() { [ ! -d /proc/1 ] && return 0; case "$(readlink "/proc/$1/cwd" 2>/dev/null)" in "$2"*) return 0 ;; esac; return 1; }',
  'if mine "$1" "$3"; then',
  '  kill -s "$2" "$1" 2>/dev/null',
  '  i=0',
  '  while kill -0 "$1" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i+1)); done',
  '  mine "$1" "$3" && kill -s KILL "$1" 2>/dev/null',
  'fi',
  'rm -rf "$3"',
].join('\n');

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function killQuietly(pid: number, signal: NodeJS.Signals | number): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function rmQuietly(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
  } catch {
    // the watchdog removes what is left once the server is gone
  }
}

/** Synchronous last-resort cleanup: used by the 'exit' handler. */
function killAllSync(): void {
  const procs = [...live];
  live.clear();
  for (const p of procs) {
    if (!p.hasExited()) killQuietly(p.pid, (p as Managed).stopSignal);
  }
  // Give servers a brief moment to release their files, then remove what we can. The watchdogs
  // (whose pipe closes when we exit) finish the job for anything still running.
  if (procs.some((p) => !p.hasExited())) sleepSync(100);
  for (const p of procs) rmQuietly(p.dir);
}

async function stopAll(timeoutMs: number): Promise<void> {
  await Promise.allSettled([...live].map((p) => p.stop(timeoutMs)));
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllSync);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = (): void => {
      const others = process.listenerCount(signal) - 1;
      void stopAll(5000).finally(() => {
        killAllSync();
        if (others === 0) {
          // Nobody else handles this signal: behave like the default (die by the signal).
          process.removeListener(signal, handler);
          process.kill(process.pid, signal);
        }
      });
    };
    process.on(signal, handler);
  }
}

class Managed implements ManagedProcess {
  readonly pid: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private done = false;
  private stopping: Promise<void> | undefined;
  private watchdog: ChildProcess | undefined;

  constructor(
    readonly child: ChildProcess,
    readonly dir: string,
    readonly logFile: string,
    readonly stopSignal: NodeJS.Signals,
  ) {
    if (child.pid === undefined) throw new Error('process has no pid');
    this.pid = child.pid;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.done = true;
        resolve({ code, signal });
      });
    });
  }

  attachWatchdog(): void {
    const dog = spawn('sh', ['-c', WATCHDOG, 'cairn-server-watchdog', String(this.pid), this.stopSignal.replace(/^SIG/, ''), this.dir], {
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    dog.on('error', () => {});
    dog.stdin?.on('error', () => {});
    // Neither the watchdog nor its pipe may keep the test process alive.
    dog.unref();
    (dog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    this.watchdog = dog;
  }

  hasExited(): boolean {
    return this.done;
  }

  logTail(lines = 30): string {
    try {
      const text = readFileSync(this.logFile, 'utf8');
      return text.trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  forget(): void {
    live.delete(this);
    this.killWatchdog();
  }

  private killWatchdog(): void {
    if (this.watchdog?.pid !== undefined && this.watchdog.exitCode === null) {
      killQuietly(this.watchdog.pid, 'SIGKILL');
    }
  }

  stop(timeoutMs = 10_000): Promise<void> {
    this.stopping ??= this.doStop(timeoutMs);
    return this.stopping;
  }

  async halt(timeoutMs = 10_000): Promise<void> {
    await this.terminate(timeoutMs);
    live.delete(this);
    this.killWatchdog();
  }

  private async terminate(timeoutMs: number): Promise<void> {
    // Keep the event loop alive while we wait for the exit.
    this.child.ref();
    if (!this.done) {
      killQuietly(this.pid, this.stopSignal);
      const timer = new Promise<'timeout'>((resolve) => setTimeout(resolve, timeoutMs, 'timeout').unref());
      const ended = await Promise.race([this.exited.then(() => 'exited' as const), timer]);
      if (ended === 'timeout' && !this.done) {
        killQuietly(this.pid, 'SIGKILL');
        await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 2000))]);
      }
    }
    this.child.unref();
  }

  private async doStop(timeoutMs: number): Promise<void> {
    await this.terminate(timeoutMs);
    live.delete(this);
    rmQuietly(this.dir);
    this.killWatchdog();
    this.child.unref();
  }
}

/** Spawns a server process under management. The caller waits for readiness itself. */
export function spawnManaged(options: SpawnManagedOptions): ManagedProcess {
  installHandlers();
  const logFd = openSync(options.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(options.command, options.args, {
      stdio: [options.stdinPipe ? 'pipe' : 'ignore', options.stdout === 'pipe' ? 'pipe' : logFd, logFd],
      env: options.env ?? process.env,
      cwd: options.dir,
    });
  } finally {
    closeSync(logFd);
  }
  child.on('error', () => {});
  if (child.pid === undefined) throw new Error(`could not start ${options.command}`);
  const managed = new Managed(child, options.dir, options.logFile, options.stopSignal ?? 'SIGTERM');
  live.add(managed);
  managed.attachWatchdog();
  child.unref();
  if (child.stdin) {
    child.stdin.on('error', () => {});
    (child.stdin as unknown as { unref?: () => void }).unref?.();
  }
  return managed;
}

/** Number of servers this process currently manages (for tests). */
export function liveProcessCount(): number {
  return live.size;
}

/** Stops every local server this process started. Safe to call more than once. */
export async function stopAllLocalServers(timeoutMs = 10_000): Promise<void> {
  await stopAll(timeoutMs);
}
