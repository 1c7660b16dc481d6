// One worker process of the demo: an engine with workers and the recovery loop over the SQLite file.
// The demo's parent process starts runs through it (IPC) and kills it with SIGKILL midway.
import { createEngine } from '@cairn/core';
import { openSqliteStore } from '@cairn/kysely';
import { order, ship } from './workflows.js';

const store = await openSqliteStore(process.env.CAIRN_DEMO_DB as string);
const engine = createEngine({
  store,
  workflows: [order, ship],
  workerId: process.env.CAIRN_DEMO_WORKER,
  // Short lease and recovery interval so the demo's takeover happens in about a second.
  timings: { leaseMs: 1200 },
  recoveryIntervalMs: 100,
});
await engine.start();

process.on('message', async (message: { type: string; input: { orderId: string; card: 'ok' | 'declined' } }) => {
  if (message.type !== 'start') return;
  const run = await engine.startRun(order, message.input, { idempotencyKey: message.input.orderId, mode: 'inline' });
  process.send?.({ type: 'started', orderId: message.input.orderId, runId: run.id });
});
process.on('SIGTERM', async () => {
  await engine.stop();
  await store.close();
  process.exit(0);
});
process.send?.({ type: 'ready' });
