/**
 * A worker process of the queued-throughput scenario: an engine with orchestrator and step workers
 * on a distributed queue, over a store opened from a spec. Says `{ ready: true }` when it polls,
 * stops cleanly on `{ stop: true }`.
 */
import { connectStore } from '../backends/connect.js';
import { QUEUES } from '../queues/index.js';
import { benchEngine } from '../scenarios/workflows.js';
import type { WorkerConfig } from './worker-config.js';

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;

async function main(): Promise<void> {
  const { store, close } = await connectStore(config.store);
  const adapter = QUEUES.find((q) => q.name === config.queue);
  if (!adapter) throw new Error(`unknown queue ${config.queue}`);
  const queue = await adapter.create(config.queueUrl);
  const engine = benchEngine(store, { queue, queuePrefix: config.queuePrefix, concurrency: config.concurrency, recovering: true });
  await engine.start();
  process.on('message', (message) => {
    if (!(message as { stop?: boolean }).stop) return;
    void (async () => {
      await engine.stop();
      await queue.close();
      await close();
      process.exit(0);
    })();
  });
  process.send?.({ ready: true });
}

main().catch((error: unknown) => {
  process.send?.({ error: String(error) });
  console.error(error);
  process.exit(1);
});
