// Starts `cairn dispatch` (the CLI, from source) as a process of its own.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { SECRET } from './handler-process.js';

const CLI = fileURLToPath(new URL('../../../cli/src/bin.ts', import.meta.url));

/** A running dispatcher process. */
export interface DispatcherProcess {
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** `cairn dispatch --url <url> [--prefix p] --target <target> --secret-env CAIRN_SECRET --poll 200 [extra]`; resolves once it dispatches. */
export async function startDispatcher(url: string, target: string, redisPrefix?: string, extra: readonly string[] = []): Promise<DispatcherProcess> {
  const args = ['--import', 'tsx', '--conditions=@cairn/source', CLI, '--url', url];
  if (redisPrefix !== undefined) args.push('--prefix', redisPrefix);
  args.push('dispatch', '--target', target, '--secret-env', 'CAIRN_SECRET', '--poll', '200', '--retries', '20', '--timeout', '30000', ...extra);
  const child = spawn(process.execPath, args, { env: { ...process.env, CAIRN_SECRET: SECRET }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Dispatching to')) resolve();
      if (process.env.CAIRN_HTTP_DEBUG) process.stderr.write(`[dispatch] ${chunk}`);
    });
    child.once('exit', (code) => reject(new Error(`cairn dispatch exited (${code}): ${output}`)));
  });
  const exited = once(child, 'exit');
  return {
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
