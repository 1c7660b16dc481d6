import { defineWorkflow } from '@cairn/core';
import { countingStore } from '@cairn/core/backend';
import type { BackendInstance } from '../backends/types.js';
import { nowMs, percentile, sleep } from '../stats.js';
import { ALL_WORKFLOWS, benchEngine } from './workflows.js';

export interface StreamLatencyOptions {
  /** Chunks measured (after `warmup` more). */
  chunks: number;
  warmup: number;
  /** Each chunk is written after a step of a pseudo-random 0..maxWorkMs, so writes land anywhere in a poll interval. */
  maxWorkMs: number;
}

export interface StreamLatencyResult {
  chunks: number;
  /** Whether the store has signals (the reader is woken by them) or the reader polls. */
  woken: 'signals' | 'polling';
  /** Chunk written (the writer's clock just before `ctx.emit`) → a reader on another connection has it, ms. */
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** `streams.append` calls per chunk by the writer (the contract: at most one store write). */
  writesPerChunk: number;
  /** The writer's `streams.append` alone (the store write, its commit included), p50 ms: the part of the latency that is the write. */
  appendP50Ms: number;
}

/** Writes `n` chunks, each the writer's clock taken just before its `ctx.emit`, after a step of `work[i]` ms. */
export const streamingWorkflow = defineWorkflow('bench-streaming', async (ctx, input: { work: number[] }) => {
  for (const [i, ms] of input.work.entries()) {
    const sent = await ctx.step(`work-${i}`, async () => {
      await sleep(ms);
      return nowMs();
    });
    await ctx.emit('ticks', sent);
  }
  await ctx.closeStream('ticks');
  return input.work.length;
});
ALL_WORKFLOWS.push(streamingWorkflow);

/**
 * Stream reader latency across connections: an engine executes a run that writes chunks; a second
 * engine over its own connection (another process's view: its own LISTEN / SUBSCRIBE connection)
 * reads the stream with `engine.readStream`; each chunk's latency is its arrival at the reader
 * minus the writer's clock just before the emit (one machine, one clock), so it includes the write.
 */
export async function streamLatency(backend: BackendInstance, options: StreamLatencyOptions): Promise<StreamLatencyResult> {
  const opened = await backend.openStore();
  // Both engines over peers, which carry the store's signals (the bench's probe leaves them out):
  // the writer announces each chunk, the reader listens on a connection of its own.
  const appendMs: number[] = [];
  const counted = countingStore(await opened.peer(), {
    history: false,
    around: async (call, forward, args) => {
      const started = nowMs();
      try {
        return await forward(...args);
      } finally {
        if (call.method === 'streams.append') appendMs.push(nowMs() - started);
      }
    },
  });
  const writer = benchEngine(counted, { concurrency: 10 });
  await writer.start();
  const peer = await opened.peer();
  const reader = benchEngine(peer);
  await reader.start({ workers: false });
  try {
    let seed = 7;
    const work = Array.from({ length: options.warmup + options.chunks }, () => {
      seed = (seed * 1664525 + 1013904223) >>> 0;
      return Math.round((seed / 2 ** 32) * options.maxWorkMs);
    });
    const appendsBefore = counted.count('streams.append');
    const handle = await writer.startRun(streamingWorkflow, { work }, { mode: 'inline' });
    const latencies: number[] = [];
    for await (const chunk of reader.readStream(handle.id, 'ticks')) {
      const arrived = nowMs();
      if (chunk.index >= options.warmup) latencies.push(Math.max(0, arrived - (chunk.data as number)));
    }
    await handle.result();
    const writesPerChunk = (counted.count('streams.append') - appendsBefore) / (work.length + 1);
    return {
      chunks: latencies.length,
      woken: peer.signals === undefined ? 'polling' : 'signals',
      p50Ms: percentile(latencies, 50),
      p90Ms: percentile(latencies, 90),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(...latencies),
      writesPerChunk,
      appendP50Ms: percentile(appendMs.slice(options.warmup), 50),
    };
  } finally {
    await reader.stop();
    await writer.stop();
    await opened.close();
  }
}
