import { randomBytes } from 'node:crypto';
import { aesGcmCodec, defineWorkflow, type Engine, type PayloadCodec } from '@cairn/core';
import { codecStore } from '@cairn/core/backend';
import type { BackendInstance } from '../backends/types.js';
import { median, nowMs } from '../stats.js';
import { benchEngine } from './workflows.js';

/** What each step of the codec scenario returns: a small order, about 200 bytes of JSON. */
function orderOf(i: number) {
  return {
    orderId: `o-${i}`,
    customer: 'c-4711',
    total: 42.5 + i,
    currency: 'EUR',
    items: [
      { sku: 'sku-1', qty: 2, price: 12.5 },
      { sku: 'sku-2', qty: 1, price: 17.5 + i },
    ],
    note: 'leave at the door',
  };
}

/** N sequential steps, each returning an order: the codec encodes every output. */
export const codecStepsWorkflow = defineWorkflow('bench-codec-steps', async (ctx, n: number) => {
  let last = 0;
  for (let i = 0; i < n; i++) last = (await ctx.step(`s${i}`, () => orderOf(i))).total;
  return last;
});

/** One side (codec off or on) of the comparison. */
export interface CodecSide {
  /** Client CPU (user + system) per step over every repetition, µs. */
  cpuUsPerStep: number;
  /** Median over repetitions of the wall time per step, µs. */
  wallUsPerStep: number;
  /** Median time of one `steps.load` of a finished run of `steps` steps (what each replay reads), ms. */
  replayReadMs: number;
}

export interface CodecResult {
  codec: string;
  steps: number;
  runs: number;
  reps: number;
  /** Bytes of JSON of one step's output, and of its envelope as the store keeps it. */
  payloadBytes: number;
  encodedBytes: number;
  off: CodecSide;
  on: CodecSide;
  /** on − off, per step: what the codec adds (encode on write; decode of what the engine reads back). */
  addedCpuUsPerStep: number;
  addedWallUsPerStep: number;
}

export interface CodecOptions {
  steps: number;
  runs: number;
  /** Runs of each side before measuring (warms the engine's and the cipher's code). */
  warmupRuns: number;
  reps: number;
}

async function runs(engine: Engine, count: number, steps: number): Promise<string> {
  let id = '';
  for (let i = 0; i < count; i++) {
    const handle = await engine.startRun(codecStepsWorkflow, steps, { mode: 'inline' });
    await handle.result();
    id = handle.id;
  }
  return id;
}

/**
 * The cost of a payload codec per step: the same inline runs of `steps` steps (each returning a
 * ~200-byte object) on one store, by an engine without a codec and one with `aesGcmCodec`,
 * repetitions alternating so drift hits both alike. Client CPU (`process.cpuUsage()`) and wall time
 * per step, and the time of the read a replay makes (`steps.load` of a finished run: the codec
 * decodes every output in it). The store is opened uncounted.
 */
export async function codecCost(backend: BackendInstance, options: CodecOptions): Promise<CodecResult> {
  const opened = await backend.openStore();
  const store = await opened.peer();
  const codec: PayloadCodec = aesGcmCodec({ keys: { k1: randomBytes(32) }, current: 'k1' });
  const engines = {
    off: benchEngine(store, { startMode: 'inline', workflows: [codecStepsWorkflow] }),
    on: benchEngine(store, { startMode: 'inline', workflows: [codecStepsWorkflow], codec }),
  };
  const readers = { off: store, on: codecStore(store, codec) };
  try {
    for (const engine of Object.values(engines)) await engine.start({ workers: false });
    const last = { off: await runs(engines.off, options.warmupRuns, options.steps), on: await runs(engines.on, options.warmupRuns, options.steps) };
    const cpu = { off: 0, on: 0 };
    const wall: Record<'off' | 'on', number[]> = { off: [], on: [] };
    for (let rep = 0; rep < options.reps; rep++) {
      for (const side of rep % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        const c0 = process.cpuUsage();
        const t0 = nowMs();
        last[side] = await runs(engines[side], options.runs, options.steps);
        wall[side].push(((nowMs() - t0) * 1000) / (options.runs * options.steps));
        const c = process.cpuUsage(c0);
        cpu[side] += c.user + c.system;
      }
    }
    const replayRead = async (side: 'off' | 'on') => {
      const times: number[] = [];
      for (let i = 0; i < options.reps; i++) {
        const t0 = nowMs();
        await readers[side].steps.load(last[side]);
        times.push(nowMs() - t0);
      }
      return median(times);
    };
    const total = options.reps * options.runs * options.steps;
    const sideOf = async (side: 'off' | 'on'): Promise<CodecSide> => ({
      cpuUsPerStep: cpu[side] / total,
      wallUsPerStep: median(wall[side]),
      replayReadMs: await replayRead(side),
    });
    const off = await sideOf('off');
    const on = await sideOf('on');
    const stored = (await store.steps.load(last.on))[0]?.output;
    return {
      codec: 'aes-256-gcm',
      steps: options.steps,
      runs: options.runs,
      reps: options.reps,
      payloadBytes: Buffer.byteLength(JSON.stringify(orderOf(0))),
      encodedBytes: Buffer.byteLength(JSON.stringify(stored)),
      off,
      on,
      addedCpuUsPerStep: on.cpuUsPerStep - off.cpuUsPerStep,
      addedWallUsPerStep: on.wallUsPerStep - off.wallUsPerStep,
    };
  } finally {
    for (const engine of Object.values(engines)) await engine.stop();
    await opened.close();
  }
}
