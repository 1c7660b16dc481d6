/**
 * A worker process of the queued-throughput scenario: an engine with orchestrator and step workers
 * on a distributed queue, over a store opened from a spec. Says `{ ready: true }` when it polls,
 * stops cleanly on `{ stop: true }`.
 */
import { subscribe } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { CAIRN_CHANNELS, type Engine } from '@cairn/core';
import type { Queue } from '@cairn/core/backend';
import { connectStore } from '../backends/connect.js';
import { QUEUES } from '../queues/index.js';
import { benchEngine } from '../scenarios/workflows.js';
import type { WorkerConfig } from './worker-config.js';

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;

async function main(): Promise<void> {
  const { store: opened, close } = await connectStore(config.store);
  // Claims this process made, and those that found the run taken (a race lost to another worker).
  const claims = { made: 0, lost: 0 };
  const claim = opened.runs.claim.bind(opened.runs);
  const runs = Object.assign(Object.create(opened.runs) as typeof opened.runs, {
    claim: async (...args: Parameters<typeof claim>) => {
      claims.made += 1;
      const run = await claim(...args);
      if (!run) claims.lost += 1;
      return run;
    },
  });
  const store = Object.assign(Object.create(opened) as typeof opened, { runs });
  let queue: Queue | undefined;
  let engine: Engine;
  if (config.queue === 'local') {
    // The engine's own local queue with the default recovery interval and lease: the store is the
    // queue between processes (decision 34).
    engine = benchEngine(store, { concurrency: config.concurrency, recoveryIntervalMs: 2000, timings: { leaseMs: 30_000 } });
  } else {
    const adapter = QUEUES.find((q) => q.name === config.queue);
    if (!adapter) throw new Error(`unknown queue ${config.queue}`);
    queue = await adapter.create(config.queueUrl);
    engine = benchEngine(store, { queue, queuePrefix: config.queuePrefix, concurrency: config.concurrency, recovering: true });
  }
  if (config.reportEnds) {
    // Published right after the completing write returned, before the completion signal is sent.
    subscribe(CAIRN_CHANNELS.run, (message) => {
      const event = message as { type?: string; runId?: string };
      if (event.type === 'run.completed') process.send?.({ ended: [event.runId, performance.timeOrigin + performance.now()] });
    });
  }
  await engine.start();
  process.on('message', (message) => {
    if (!(message as { stop?: boolean }).stop) return;
    void (async () => {
      await engine.stop();
      await queue?.close();
      await close();
      process.send?.({ claims }, () => process.exit(0));
    })();
  });
  process.send?.({ ready: true });
}

main().catch((error: unknown) => {
  process.send?.({ error: String(error) });
  console.error(error);
  process.exit(1);
});
