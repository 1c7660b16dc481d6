import { defineWorkflow, type Engine } from '@cairn/core';
import type { BackendInstance } from '../backends/types.js';
import { nowMs, sleep } from '../stats.js';
import { benchEngine, noop } from './workflows.js';

/** Round trips of one sequential inline run of a one-step workflow, by how it is limited. */
export interface LimitedStartCost {
  variant: 'no limit' | 'concurrency limit' | 'start rate limit';
  /** Driver round trips (memory: store calls) per run: `startRun` (inline), the execution and `result()`. */
  perRun: number;
  /** Of which `slots.*` calls, by method, per run. */
  slotsByMethod: Record<string, number>;
}

/** Two keys of one workflow, each limited to one run at a time; one submits `ratio`× the runs of the other, first. */
export interface KeyFairness {
  bigRuns: number;
  smallRuns: number;
  /** The worker's concurrency (each key's limit is 1). */
  concurrency: number;
  workMs: number;
  /** The first submission → the last run of each key completed. */
  smallDoneMs: number;
  bigDoneMs: number;
  /** Runs of the big key completed when the small key's last run completed. */
  bigDoneWhenSmallDone: number;
  /** Driver round trips per run over the whole drain (refusals and wake-ups included). */
  roundTripsPerRun: number;
}

export interface FlowResult {
  /** Sequential runs per variant. */
  runs: number;
  costs: LimitedStartCost[];
  fairness: KeyFairness;
}

export interface FlowOptions {
  runs: number;
  smallRuns: number;
  ratio: number;
  concurrency: number;
  workMs: number;
}

const oneStep = async (ctx: { step(name: string, fn: () => Promise<void>): Promise<void> }) => ctx.step('s', noop);
const plain = defineWorkflow('bench-flow-plain', oneStep);
const limited = defineWorkflow('bench-flow-limited', oneStep, { concurrency: { limit: 10 } });
const rated = defineWorkflow('bench-flow-rated', oneStep, { rateLimit: { limit: 10_000, period: '1s' } });
/** Per-key limited work: a tenant key and a step that takes `workMs`. */
const tenants = defineWorkflow('bench-flow-tenants', async (ctx, input: { tenant: string; workMs: number }) => ctx.step('work', () => sleep(input.workMs)), {
  concurrency: { limit: 1, key: (input: { tenant: string }) => input.tenant },
});
const FLOW_WORKFLOWS = [plain, limited, rated, tenants];

async function costOf(
  backend: BackendInstance,
  engine: Engine,
  probeCalls: () => Record<string, number>,
  workflow: typeof plain,
  variant: LimitedStartCost['variant'],
  runs: number,
): Promise<LimitedStartCost> {
  // One warm-up run: first-use costs (a version row, a prepared statement) are not the run's.
  await (await engine.startRun(workflow, null, { mode: 'inline' })).result();
  const rt0 = backend.counter.snapshot().total;
  const calls0 = probeCalls();
  for (let i = 0; i < runs; i++) await (await engine.startRun(workflow, null, { mode: 'inline' })).result();
  const calls = probeCalls();
  const slotsByMethod: Record<string, number> = {};
  for (const [method, n] of Object.entries(calls)) {
    const d = n - (calls0[method] ?? 0);
    if (method.startsWith('slots.') && d !== 0) slotsByMethod[method] = d / runs;
  }
  return { variant, perRun: (backend.counter.snapshot().total - rt0) / runs, slotsByMethod };
}

/**
 * Flow control (docs/flow-control.md): what a limit costs a run, in round trips, and whether a
 * busy key starves another.
 * - Cost: sequential inline runs of a one-step workflow without a limit, with a concurrency limit
 *   (a slot taken after the claim and given up before the outcome is written) and with a start
 *   rate limit (a slot taken at the first execution); round trips per run, whole run.
 * - Fairness: two keys limited to one run at a time each, the big key submitting `ratio`× the
 *   small key's runs first, one worker engine draining both while they are submitted: when the
 *   small key is done, and how much of the big key's backlog was done by then.
 * Resolves `null` on a store without slots (not measured).
 */
export async function flowControl(backend: BackendInstance, options: FlowOptions): Promise<FlowResult | null> {
  const opened = await backend.openStore();
  const { probe } = opened;
  if (probe.store.slots === undefined) {
    await opened.close();
    return null;
  }
  const engine = benchEngine(probe.store, { startMode: 'inline', workflows: FLOW_WORKFLOWS });
  await engine.start({ workers: false });
  const costs: LimitedStartCost[] = [];
  try {
    const calls = () => probe.callSnapshot();
    costs.push(await costOf(backend, engine, calls, plain, 'no limit', options.runs));
    costs.push(await costOf(backend, engine, calls, limited, 'concurrency limit', options.runs));
    costs.push(await costOf(backend, engine, calls, rated, 'start rate limit', options.runs));
  } finally {
    await engine.stop();
  }
  let fairness: KeyFairness;
  try {
    fairness = await keyFairness(backend, probe, options);
  } finally {
    await opened.close();
  }
  return { runs: options.runs, costs, fairness };
}

async function keyFairness(
  backend: BackendInstance,
  probe: { store: Parameters<typeof benchEngine>[0]; finishedAt: Map<string, number>; trackRuns: boolean },
  options: FlowOptions,
): Promise<KeyFairness> {
  const worker = benchEngine(probe.store, { recovering: true, workflows: FLOW_WORKFLOWS, concurrency: options.concurrency });
  const big: string[] = [];
  const small: string[] = [];
  probe.trackRuns = true;
  await worker.start();
  const rt0 = backend.counter.snapshot().total;
  try {
    const start = (tenant: string) => worker.startRun(tenants, { tenant, workMs: options.workMs });
    const t0 = nowMs();
    for (let i = 0; i < options.smallRuns * options.ratio; i++) big.push((await start('big')).id);
    for (let i = 0; i < options.smallRuns; i++) small.push((await start('small')).id);
    for (const id of small) await worker.result(id);
    const smallDone = Math.max(...small.map((id) => probe.finishedAt.get(id) ?? Number.NaN));
    const bigDoneWhenSmallDone = big.filter((id) => (probe.finishedAt.get(id) ?? Infinity) <= smallDone).length;
    for (const id of big) await worker.result(id);
    const bigDone = Math.max(...big.map((id) => probe.finishedAt.get(id) ?? Number.NaN));
    return {
      bigRuns: big.length,
      smallRuns: small.length,
      concurrency: options.concurrency,
      workMs: options.workMs,
      smallDoneMs: smallDone - t0,
      bigDoneMs: bigDone - t0,
      bigDoneWhenSmallDone,
      roundTripsPerRun: (backend.counter.snapshot().total - rt0) / (big.length + small.length),
    };
  } finally {
    probe.trackRuns = false;
    await worker.stop();
  }
}
