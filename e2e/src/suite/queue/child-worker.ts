/**
 * Entry point of the worker-death case's child process:
 * `node child-worker.js <module URL> <namespace> <queue name>`. It opens the harness's queue,
 * starts a worker whose handler reports the job to the parent (over IPC) and then never finishes,
 * and waits to be killed.
 */
import type { Queue } from '@cairn/core/backend';

const [moduleUrl, namespace, queueName] = process.argv.slice(2);
if (!moduleUrl || !namespace || !queueName || typeof process.send !== 'function') {
  console.error('child-worker: usage: node child-worker.js <module URL> <namespace> <queue> (with an IPC channel)');
  process.exit(2);
}
const send = (message: object): void => void process.send!(message);

try {
  const harness = (await import(moduleUrl)) as { createQueue?: (namespace: string) => Promise<Queue> };
  if (typeof harness.createQueue !== 'function') throw new Error(`${moduleUrl} exports no createQueue(namespace)`);
  const queue = await harness.createQueue(namespace);
  await queue.work(
    queueName,
    async (job) => {
      send({ type: 'started', id: job.id, payload: job.payload });
      // Never settles: the parent kills this process while the job is in hand.
      await new Promise<never>(() => {});
    },
    { concurrency: 1 },
  );
  send({ type: 'ready' });
} catch (error) {
  send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
}
