// Runs the real `cairn` executable (src/bin.ts through tsx) as a child process.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));
// Absolute, so the child finds tsx whatever its working directory.
const TSX = import.meta.resolve('tsx');

export interface CairnResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cairnEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: undefined,
    FORCE_COLOR: undefined,
    CAIRN_URL: undefined,
    CAIRN_DASHBOARD_TOKEN: undefined,
    ...extra,
  };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
}

/** Starts a long-running `cairn ...args` (the dashboard); the caller stops it. */
export function startCairn(args: readonly string[], options: { env?: Record<string, string | undefined> } = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', TSX, '--conditions=@cairn/source', BIN, ...args], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: cairnEnv(options.env),
    stdio: 'pipe',
  });
}

/** `cairn ...args` in `cwd` (default the package directory), without a TTY, colours off unless `env` says. */
export function runCairn(args: readonly string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<CairnResult> {
  const env = cairnEnv(options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, '--conditions=@cairn/source', BIN, ...args], {
      cwd: options.cwd ?? fileURLToPath(new URL('../..', import.meta.url)),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
