// Running commands: output captured (and streamed when asked), a clear error with the output's tail.
import { spawn } from 'node:child_process';

export interface ExecOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Print the output as it comes (still captured). */
  stream?: boolean;
  /** Kill the command after this long. */
  timeoutMs?: number;
}

export interface ExecResult {
  code: number;
  output: string;
  ms: number;
}

/** Runs a command; resolves with its exit code and combined output (never rejects on a non-zero exit). */
export function exec(command: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      if (options.stream) process.stdout.write(text);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = options.timeoutMs
      ? setTimeout(() => {
          output += `\n[release-check] killed after ${options.timeoutMs} ms\n`;
          child.kill('SIGKILL');
        }, options.timeoutMs)
      : undefined;
    child.on('error', (error) => {
      if (timer) clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), output, ms: Date.now() - started });
    });
  });
}

/** The last `lines` lines of `text`, indented, for error messages. */
export function tail(text: string, lines = 40): string {
  const all = text.trimEnd().split('\n');
  const shown = all.slice(-lines);
  return (all.length > lines ? `    … (${all.length - lines} earlier lines)\n` : '') + shown.map((l) => `    ${l}`).join('\n');
}

/** Runs a command and throws, with the output's tail, unless it exits 0. */
export async function execOk(what: string, command: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  const result = await exec(command, args, options);
  if (result.code !== 0) {
    throw new Error(`${what} failed (exit ${result.code}): ${command} ${args.join(' ')}\n${tail(result.output)}`);
  }
  return result;
}

/** Formats a duration in seconds with one decimal. */
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
