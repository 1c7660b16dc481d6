import assert from 'node:assert/strict';
import { isTerminalRunStatus, type Json, type RunRecord } from '@cairn/core';
import { FAULT_POINTS, type FaultPoint, type FaultSite } from '@cairn/core/testing';
import { defineGraph } from '@cairn/graph';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { engineWorld } from '../engine/engine-world.js';
import { actionValue, generateGraph, interpretGraph, type RandomGraph } from '../fixtures/random-graph.js';
import { Rng } from '../fixtures/random-program.js';
import { CrashAt, stopDead } from './simulation.js';

/** Seeds per backend when neither `CAIRN_GRAPH_SEED` nor `CAIRN_GRAPH_SEEDS` is set. */
function defaultSeeds(backend: string): number {
  if (backend === 'memory' || backend.includes('sqlite')) return 20;
  if (backend.includes('mongo')) return 4;
  return 8;
}

/** What one run of a generated graph did outside the engine. */
interface GraphTrace {
  gen: number;
  crashedGens: Set<number>;
  /** Attempts per step key (so transient failures fail the first attempts of a key, across processes). */
  attempts: Map<string, number>;
  /** Successful bodies per step key, with the generation that ran them. */
  successes: { key: string; gen: number }[];
}

function graphOf(g: RandomGraph, trace: GraphTrace) {
  return defineGraph(`graph-fuzz-${g.seed}`, g.spec, {
    actions: {
      act: (input: Json, c) => {
        const n = (trace.attempts.get(c.key) ?? 0) + 1;
        trace.attempts.set(c.key, n);
        if (g.permanent.includes(c.node)) throw new Error(`permanent failure at ${c.node}`);
        if (n <= (g.transient[c.node] ?? 0)) throw new Error(`transient failure ${n} at ${c.node}`);
        trace.successes.push({ key: c.key, gen: trace.gen });
        return actionValue(c.node, input);
      },
    },
  });
}

/** Runs one generated graph to its end with the planned crashes; returns what went wrong. */
async function runGraphSeed(env: CaseEnv, g: RandomGraph, expected: Json): Promise<{ wrong: string[]; crashes: FaultSite[] }> {
  const rng = new Rng(g.seed ^ 0x5bd1e995);
  const plan: { point: FaultPoint; n: number }[] = Array.from({ length: rng.int(1, 3) }, () => ({ point: rng.pick(FAULT_POINTS), n: rng.int(1, 12) }));
  const trace: GraphTrace = { gen: 0, crashedGens: new Set(), attempts: new Map(), successes: [] };
  const wf = graphOf(g, trace);
  const crashes: FaultSite[] = [];
  const next = () => {
    const p = plan.shift();
    return p ? new CrashAt(p.point, p.n) : undefined;
  };
  let faults = next();
  const w = await engineWorld(env, [wf], faults ? { faults } : {});
  let engine = w.engine;
  const handle = await engine.startRun(wf, g.input);
  let run: RunRecord | undefined;
  const wrong: string[] = [];
  try {
    await w.runUntil(
      `graph seed ${g.seed}`,
      async () => {
        if (faults?.crashed) {
          crashes.push(faults.crashed);
          trace.crashedGens.add(trace.gen);
          await stopDead(w, engine, true);
          trace.gen += 1;
          faults = next();
          engine = await w.startEngine([wf], faults ? { faults } : {});
          return false;
        }
        run = await w.raw.runs.get(handle.id);
        return run !== undefined && isTerminalRunStatus(run.status);
      },
      { maxTimers: 1_500 },
    );
  } catch (error) {
    wrong.push(`stuck: ${(error as Error).message.split('\n')[0]}`);
  }
  await stopDead(w, engine);
  if (run && isTerminalRunStatus(run.status)) {
    if (run.status !== 'completed') wrong.push(`run ${run.status}: ${run.error?.code ?? run.error?.name}: ${run.error?.message}`);
    else if (JSON.stringify(run.output) !== JSON.stringify(expected))
      wrong.push(`output ${JSON.stringify(run.output)}\n      expected ${JSON.stringify(expected)}`);
  }
  // A body may succeed twice only when the process that ran one of them crashed before recording it.
  const byKey = new Map<string, number[]>();
  for (const s of trace.successes) byKey.set(s.key, [...(byKey.get(s.key) ?? []), s.gen]);
  for (const [key, gens] of byKey) {
    const kept = gens.filter((gen) => !trace.crashedGens.has(gen));
    if (kept.length > 1) wrong.push(`action ${key} succeeded ${kept.length} times in processes that did not crash`);
  }
  return { wrong, crashes };
}

function seedsFor(backend: string): { seeds: number[]; verbose: boolean } {
  const one = process.env.CAIRN_GRAPH_SEED;
  if (one !== undefined && one.trim() !== '') return { seeds: [Number(one)], verbose: true };
  const many = process.env.CAIRN_GRAPH_SEEDS;
  const count = many !== undefined && many.trim() !== '' ? Number(many) : defaultSeeds(backend);
  assert.ok(Number.isSafeInteger(count) && count >= 1, `CAIRN_GRAPH_SEEDS must be a positive integer, got ${JSON.stringify(many)}`);
  return { seeds: Array.from({ length: count }, (_, i) => i + 1), verbose: false };
}

async function fuzzGraphs(env: CaseEnv): Promise<void> {
  const { seeds, verbose } = seedsFor(env.harness.name);
  const failures: string[] = [];
  let crashes = 0;
  let nodes = 0;
  for (const seed of seeds) {
    const g = generateGraph(seed);
    nodes += Object.keys(g.spec.nodes).length;
    const expected = interpretGraph(g);
    if (verbose) console.log(`# graph seed ${seed}: ${JSON.stringify(g)}\n# expected: ${JSON.stringify(expected)}`);
    let result: { wrong: string[]; crashes: FaultSite[] };
    try {
      result = await runGraphSeed(env, g, expected);
    } catch (error) {
      result = { wrong: [`the test threw: ${(error as Error).stack ?? String(error)}`], crashes: [] };
    }
    crashes += result.crashes.length;
    if (result.wrong.length > 0) failures.push(`seed ${seed}: ${result.wrong.join('\n    ')}`);
  }
  const summary = `graph fuzz: seeds=${seeds.length} nodes=${nodes} wrong=${failures.length}`;
  console.log(`# ${summary} (${env.harness.name}, ${crashes} crashes fired)`);
  for (const failure of failures) console.log(`# ${failure.replaceAll('\n', '\n# ')}`);
  if (failures.length > 0) assert.fail(`${summary}\nReplay one with CAIRN_GRAPH_SEED=<seed>:\n${failures.join('\n')}`);
}

/**
 * Adversarial: seeded random graph workflows (parallel edges, branches on the data, joins, error
 * edges, forEach with a concurrency limit, sleeps, transient and permanent failures), each run with
 * crashes at random fault points; the output must be the plain interpreter's, and no action may
 * succeed twice in processes that did not crash.
 */
export const graphFuzzGroup: CaseGroup = caseGroup('adversarial.graph-fuzz', 'adversarial: random graph workflows with crashes', [
  conformanceCase("random graphs with crashes: the interpreter's output, every action once", fuzzGraphs),
]);
