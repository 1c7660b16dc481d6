import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { CAIRN_CHANNELS, createMemoryStore } from '@cairn/core';
import { median, nowMs } from '../stats.js';
import { benchEngine, stepsWorkflow } from './workflows.js';

/** One way of observing the engine: set up before a repetition, torn down after it. */
export interface ObservabilityVariant {
  name: string;
  setup(): () => void;
}

export interface ObservabilityResult {
  runs: number;
  stepsPerRun: number;
  reps: number;
  /** Median µs per inline step on the memory store, per variant; `ratio` is against `none`. */
  variants: { name: string; microsPerStep: number; ratio: number }[];
  /**
   * What the code costs while nobody listens: the nanoseconds of one "does anyone listen?" check
   * (a channel's `hasSubscribers` and the logger's level), times the checks made per step
   * (`checksPerStep`), as a share of the time of a step.
   */
  checkNanos: number;
  checksPerStep: number;
  idleOverheadPercent: number;
}

const noSubscriber: ObservabilityVariant = { name: 'none', setup: () => () => {} };

/** A subscriber on the three channels that does nothing: the cost of building and publishing every message. */
const subscribed: ObservabilityVariant = {
  name: 'subscriber',
  setup() {
    const names = Object.values(CAIRN_CHANNELS);
    const listener = () => {};
    for (const name of names) subscribe(name, listener);
    return () => {
      for (const name of names) unsubscribe(name, listener);
    };
  },
};

/**
 * The memory store, runs of `steps` no-op inline steps started inline one after another, with the
 * variants interleaved in every repetition (so drift of the machine hits each alike).
 */
export async function observabilityOverhead(options: {
  runs: number;
  steps: number;
  reps: number;
  extra?: ObservabilityVariant[];
}): Promise<ObservabilityResult> {
  const variants = [noSubscriber, subscribed, ...(options.extra ?? [])];
  const samples = new Map(variants.map((v) => [v.name, [] as number[]]));
  for (let rep = -1; rep < options.reps; rep++) {
    for (const variant of rep % 2 === 0 ? variants : [...variants].reverse()) {
      const engine = benchEngine(createMemoryStore(), { startMode: 'inline' });
      await engine.start({ workers: false });
      const teardown = variant.setup();
      try {
        const t0 = nowMs();
        for (let i = 0; i < options.runs; i++) await (await engine.startRun(stepsWorkflow, options.steps)).result();
        // The first repetition warms up and is not counted.
        if (rep >= 0) samples.get(variant.name)!.push(((nowMs() - t0) * 1000) / (options.runs * options.steps));
      } finally {
        teardown();
        await engine.stop();
      }
    }
  }
  const base = median(samples.get('none')!);
  const checkNanos = measureCheck();
  // Two checks per inline step (its start and its end); about four per run (creation, claim, end).
  const checksPerStep = 2 + 4 / options.steps;
  return {
    runs: options.runs,
    stepsPerRun: options.steps,
    reps: options.reps,
    variants: variants.map((v) => ({ name: v.name, microsPerStep: median(samples.get(v.name)!), ratio: median(samples.get(v.name)!) / base })),
    checkNanos,
    checksPerStep,
    idleOverheadPercent: (100 * checksPerStep * checkNanos) / (base * 1000),
  };
}

/** Nanoseconds of one idle check as the engine makes it: a channel's `hasSubscribers`, then a level test. */
function measureCheck(): number {
  const probe = channel(CAIRN_CHANNELS.step);
  const levels = { debug: () => {} } as Record<string, unknown>;
  const noop = levels['debug'];
  let hits = 0;
  const n = 2_000_000;
  const t0 = nowMs();
  for (let i = 0; i < n; i++) if (probe.hasSubscribers || levels['debug'] !== noop) hits++;
  const elapsed = nowMs() - t0;
  if (hits !== 0) throw new Error('a subscriber appeared during the check measurement');
  return (elapsed * 1e6) / n;
}
