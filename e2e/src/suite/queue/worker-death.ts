import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import type { Json } from '@cairn/core';
import { queueCase, type QueueCase, type QueueCaseEnv } from './queue-case.js';
import { Deliveries, QUEUE, startWorker, waitFor } from './support.js';

type ChildMessage = { type: 'ready' } | { type: 'started'; id: string; payload: Json } | { type: 'error'; message: string };

// The loader flags the test process runs with (tsx, export conditions), so the child can load the
// same sources; the test runner's own flags are left out.
function loaderFlags(): string[] {
  const out = new Set<string>();
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const match = /^(--import|--require|-r|--loader|--experimental-loader|--conditions|-C)(?:=(.*))?$/.exec(argv[i]!);
    if (!match) continue;
    const value = match[2] ?? argv[++i];
    // Normalised to --flag=value, so the same flag given twice is passed once.
    const flag = match[1] === '-r' ? '--require' : match[1] === '-C' ? '--conditions' : match[1];
    if (value !== undefined) out.add(`${flag}=${value}`);
  }
  return [...out];
}

// The child script sits next to this file: .ts when running from sources, .js from dist.
function childScript(): string {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./child-worker${ext}`, import.meta.url).pathname;
}

function spawnChild(env: QueueCaseEnv): { child: ChildProcess; messages: ChildMessage[]; exited: Promise<void> } {
  const worker = env.harness.childWorker!;
  const module = worker.module instanceof URL ? worker.module.href : worker.module.startsWith('file:') ? worker.module : pathToFileURL(worker.module).href;
  const child = spawn(process.execPath, [...loaderFlags(), childScript(), module, env.namespace, QUEUE], {
    env: { ...process.env, ...worker.env?.() },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: ChildMessage[] = [];
  child.on('message', (message) => messages.push(message as ChildMessage));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Never leave a child behind, whatever the case's outcome.
  env.defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, messages, exited };
}

const redelivered = queueCase(
  'queue.redelivery.worker-killed',
  'a job whose worker process is killed (SIGKILL) mid-job is delivered again to another worker',
  async (env) => {
    const { child, messages, exited } = spawnChild(env);
    const failure = () => messages.find((m): m is Extract<ChildMessage, { type: 'error' }> => m.type === 'error')?.message;
    await waitFor(
      () => messages.some((m) => m.type === 'ready' || m.type === 'error'),
      60_000,
      'the child worker to start',
      () => failure() ?? 'no message',
    );
    assert.equal(failure(), undefined, `child worker failed: ${failure()}`);

    await env.queue.send(QUEUE, { id: 'victim' });
    await waitFor(() => messages.some((m) => m.type === 'started'), env.deliveryTimeoutMs, 'the child to take the job');
    const taken = messages.find((m): m is Extract<ChildMessage, { type: 'started' }> => m.type === 'started')!;
    assert.deepEqual(taken.payload, { id: 'victim' });
    child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();

    const deliveries = new Deliveries();
    await startWorker(env, env.queue, QUEUE, async (job) => void deliveries.record(job, 'survivor'), { concurrency: 1 });
    await env.queue.send(QUEUE, { id: 'fresh' });
    await waitFor(
      () => deliveries.of('victim').length > 0,
      env.redeliveryTimeoutMs,
      "the dead worker's job to be delivered again",
      () => deliveries.ids(),
    );
    await waitFor(() => deliveries.of('fresh').length > 0, env.deliveryTimeoutMs, 'a job sent after the kill');
    const again = deliveries.of('victim')[0]!;
    assert.equal(again.job.id, taken.id, 'the same job came back (not a copy)');
    assert.deepEqual(again.job.payload, { id: 'victim' });
    assert.ok(again.at >= killedAt, 'delivered again after the kill');
  },
  ['distributed', 'childWorker'],
);

/** Redelivery after a worker process dies. */
export const workerDeathCases: readonly QueueCase[] = [redelivered];
