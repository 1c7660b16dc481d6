// Starts and stops the handler process (fixtures/handler-server.ts) and pushes to it with fetch.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { signPush, type PushAnswer, type PushUnit } from '@cairn/http';

const SERVER = fileURLToPath(new URL('../fixtures/handler-server.ts', import.meta.url));

export const SECRET = 'test-secret-0123456789abcdef';
export const OLD_SECRET = 'old-secret-0123456789abcdef';

/** A running handler process. */
export interface HandlerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** SIGKILL: the process dies at once, mid-request if one is running. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the handler over `storeUrl`; resolves once it listens. */
export async function startHandler(env: Record<string, string>): Promise<HandlerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', SERVER], {
    env: { ...process.env, CAIRN_HTTP_SECRETS: `${SECRET} ${OLD_SECRET}`, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the handler process exited (${code}) before listening: ${output}`)));
  });
  const exited = once(child, 'exit');
  return {
    url: `http://127.0.0.1:${port}/api/cairn`,
    child,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** POSTs a signed push; resolves with the HTTP status and the answer. */
export async function push(url: string, unit: PushUnit, secret: string = SECRET): Promise<{ status: number; answer: PushAnswer }> {
  const body = JSON.stringify(unit);
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signPush(body, secret) }, body });
  return { status: response.status, answer: (await response.json()) as PushAnswer };
}

/**
 * Pushes `unit` and everything its answers ask for next, one at a time, until nothing is left;
 * returns every answer in order.
 */
export async function pushUntilDone(url: string, unit: PushUnit, limit = 500): Promise<PushAnswer[]> {
  const answers: PushAnswer[] = [];
  const queue: PushUnit[] = [unit];
  while (queue.length > 0) {
    if (answers.length >= limit) throw new Error(`more than ${limit} pushes`);
    const next = queue.shift() as PushUnit;
    const { status, answer } = await push(url, next);
    if (status !== 200) throw new Error(`push answered ${status}: ${JSON.stringify(answer)}`);
    answers.push(answer);
    for (const more of answer.next) {
      if (more.kind === 'step' && more.delayMs !== undefined) await new Promise((r) => setTimeout(r, more.delayMs));
      queue.push(more.kind === 'run' ? { kind: 'run', runId: more.runId } : { kind: 'step', job: more.job });
    }
  }
  return answers;
}
