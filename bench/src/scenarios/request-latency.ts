import { defineWorkflow } from '@cairn/core';
import type { BackendInstance } from '../backends/types.js';
import { nowMs, percentile } from '../stats.js';
import { ALL_WORKFLOWS, benchEngine } from './workflows.js';

export interface RequestLatencyOptions {
  /** Requests measured (after `warmup` more), one after another. */
  requests: number;
  warmup: number;
}

export interface RequestLatencyResult {
  requests: number;
  /** Whether the store has signals (the caller is woken by them) or the caller polls. */
  woken: 'signals' | 'polling';
  /** `engine.request` called → resolved with the reply, by a caller on another connection, ms. */
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Takes `n` requests one by one and answers each at once; between two it is suspended. */
export const answeringWorkflow = defineWorkflow('bench-answering', async (ctx, input: { n: number }) => {
  for (let i = 0; i < input.n; i += 1) {
    const request = await ctx.receiveRequest<{ i: number }, number>('ping');
    await request.reply(request.payload.i);
  }
  return input.n;
});
ALL_WORKFLOWS.push(answeringWorkflow);

/**
 * Request latency to a suspended run, across connections: a worker engine executes a run that waits
 * for requests (suspended between two: no execution in flight); a second engine on its own connection
 * (another process's view, no workers) sends them with `engine.request`, one after another, and
 * measures each call until its reply. It includes the send, the dispatch of the run to the worker
 * (by the store's signals, or the worker's poll on a store without them), the claim, the receipt
 * and reply writes, and the caller's wake-up.
 */
export async function requestLatency(backend: BackendInstance, options: RequestLatencyOptions): Promise<RequestLatencyResult> {
  const opened = await backend.openStore();
  // Recovery every second: on a store without signals that pass is how the worker finds the woken run.
  const worker = benchEngine(await opened.peer(), { concurrency: 10, recovering: true });
  await worker.start();
  const peer = await opened.peer();
  const caller = benchEngine(peer);
  await caller.start({ workers: false });
  try {
    const total = options.warmup + options.requests;
    const handle = await worker.startRun(answeringWorkflow, { n: total }, { mode: 'inline' });
    const latencies: number[] = [];
    for (let i = 0; i < total; i += 1) {
      const started = nowMs();
      const reply = await caller.request(handle.id, 'ping', { i }, { timeout: '60s' });
      if (reply !== i) throw new Error(`request ${i} got reply ${String(reply)}`);
      if (i >= options.warmup) latencies.push(nowMs() - started);
    }
    await handle.result();
    return {
      requests: latencies.length,
      woken: peer.signals === undefined ? 'polling' : 'signals',
      p50Ms: percentile(latencies, 50),
      p90Ms: percentile(latencies, 90),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(...latencies),
    };
  } finally {
    await caller.stop();
    await worker.stop();
    await opened.close();
  }
}
