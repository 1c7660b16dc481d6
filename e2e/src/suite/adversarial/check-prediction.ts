import assert from 'node:assert/strict';
import {
  checkWorkflowCode,
  type Engine,
  defineWorkflow,
  isTerminalRunStatus,
  type Json,
  type RunRecord,
  type WorkflowContext,
  type WorkflowDefinition,
} from '@cairn/core';
import { countingStore, type RunVerdict } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { engineWorld, type EngineWorld } from '../engine/engine-world.js';
import { newNamespace } from '../run-in-fresh-namespace.js';
import {
  childBodies,
  describeNodes,
  GATES,
  gatedProgram,
  mutate,
  waitsPerEvent,
  type GatedNode,
  type GatedProgram,
  type Mutation,
} from '../fixtures/program-mutation.js';
import { eventPayload, stateValue, stepValue } from '../fixtures/random-program.js';

/**
 * Seeds per backend when neither `CAIRN_CHECK_SEED` nor `CAIRN_CHECK_SEEDS` is set: what fits
 * the CI budget (about 5 s on the in-process stores, 15 s on a server). Every backend runs the same
 * programs and mutations from seed 1.
 */
function defaultSeeds(backend: string): number {
  if (backend === 'memory') return 30;
  if (backend.includes('sqlite')) return 20;
  if (backend.includes('mongo')) return 4;
  return 20;
}

/**
 * Seeds run one after another on one store, then the next ones on a fresh store. A namespace's
 * creation (migrations) costs a SQL server about a seed's time; FerretDB's queries slow down as a
 * namespace fills (twice as slow after a few seeds), so there every seed gets its own.
 */
function seedsPerStore(backend: string): number {
  return backend.includes('mongo') ? 1 : 10;
}
/** Timers `runUntil` may fire per phase before a run counts as stuck. */
const MAX_TIMERS = 1_500;

/** The input of a gated run: how many gates it goes through before it suspends. */
interface GatedInput {
  pass: number;
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One build of a gated program: the workflow `name` (the root program in its code) and
 * `name-kid` (a child's part, looked up by the child node's path). Bodies wait a seeded number of
 * macrotask turns, so branches finish out of call order.
 */
export function gatedBuild(name: string, program: GatedProgram): WorkflowDefinition[] {
  const kids = childBodies(program.body);
  const kidName = `${name}-kid`;

  const runSequence = async (ctx: WorkflowContext, nodes: readonly GatedNode[], pass: number): Promise<unknown[]> => {
    const out: unknown[] = [];
    for (const n of nodes) out.push(await runNode(ctx, n, pass));
    return out;
  };

  const runNode = async (ctx: WorkflowContext, n: GatedNode, pass: number): Promise<unknown> => {
    switch (n.kind) {
      case 'step':
        return ctx.step(
          n.name,
          async () => {
            for (let i = 0; i < (n.delays[0]?.turns ?? 0); i += 1) await macrotask();
            return stepValue(n.path);
          },
          n.queued ? { queued: true } : {},
        );
      case 'sleep':
        await ctx.sleep(n.name, n.ms);
        return null;
      case 'event':
        return ctx.waitForEvent(n.event);
      case 'set':
        await ctx.setState(n.key, stateValue(n.path));
        return null;
      case 'get':
        return (await ctx.state(n.key)) ?? null;
      case 'now':
        return ctx.now();
      case 'random':
        return ctx.random();
      case 'uuid':
        return ctx.uuid();
      case 'child':
        return ctx.child(kidName, { path: n.path, pass } as Json, n.name === undefined ? undefined : { name: n.name });
      case 'all':
        return Promise.all(n.branches.map((branch) => runSequence(ctx, branch, pass)));
      case 'gate':
        if (n.wait === 'event') return ctx.waitForEvent(`gate${n.gate}`);
        await ctx.sleep(`gate${n.gate}`, pass > n.gate ? 1 : n.ms);
        return null;
      case 'patched':
        return ctx.patched(n.id) ? runSequence(ctx, n.body, pass) : 'old path';
    }
  };

  return [
    defineWorkflow(name, (ctx, input: GatedInput) => runSequence(ctx, program.body, input.pass)) as WorkflowDefinition,
    defineWorkflow(kidName, (ctx, input: { path: string; pass: number }) => runSequence(ctx, kids.get(input.path) ?? [], input.pass)) as WorkflowDefinition,
  ];
}

/** What resuming a run with the mutated build did. */
interface Outcome {
  status: RunRecord['status'] | 'stuck';
  code?: string;
  message?: string;
  /** For NON_DETERMINISM: the run that diverged (`data.runId`). */
  of?: string;
}

function outcomeOf(run: RunRecord): Outcome {
  const of = (run.error?.data as { runId?: unknown } | undefined)?.runId;
  return {
    status: run.status,
    ...(run.error ? { code: run.error.code, message: run.error.message } : {}),
    ...(run.error?.code === 'NON_DETERMINISM' && typeof of === 'string' ? { of } : {}),
  };
}

/** One run of one seed: the check's verdict and what resuming did. */
interface Judged {
  /** `gate N` for a root run, `child of gate N` for a child run in flight at the check. */
  what: string;
  runId: string;
  verdict: RunVerdict | undefined;
  outcome: Outcome;
}

/**
 * Whether a verdict predicted an outcome: compatible ⇔ it went on (not NON_DETERMINISM of its own);
 * diverges ⇔ NON_DETERMINISM. A child's divergence a parent fails with is the child's, not the parent's.
 */
function predicted(verdict: RunVerdict | undefined, outcome: Outcome): boolean {
  if (outcome.status === 'stuck' || verdict === undefined) return false;
  const diverged = outcome.status === 'failed' && outcome.code === 'NON_DETERMINISM' && (outcome.of === undefined || outcome.of === verdict.runId);
  if (verdict.verdict === 'compatible') return !diverged && (outcome.status === 'completed' || outcome.status === 'failed');
  if (verdict.verdict === 'diverges') return diverged;
  return false;
}

/**
 * Whether every root run stands at its gate: waiting, its gate's wait recorded and unfinished in it
 * or in a child in flight (a gate in a child). When `settled`, also every other call of the run and
 * of its children in flight finished, and only the children holding the gate in flight.
 */
async function atGates(w: EngineWorld, runs: readonly { id: string; pass: number }[], settled: boolean): Promise<boolean> {
  for (const { id, pass } of runs) {
    const at = await gateIn(w, id, pass, settled);
    if (at !== 'gate') return false;
  }
  return true;
}

/** Where run `id` stands: at gate `pass` (in it or a child in flight), quiet without it, or busy. */
async function gateIn(w: EngineWorld, id: string, pass: number, settled: boolean): Promise<'gate' | 'quiet' | 'busy'> {
  const run = await w.raw.runs.get(id);
  if (run?.status !== 'waiting') return 'busy';
  const steps = await w.raw.steps.load(id);
  const isGate = (s: (typeof steps)[number]) => (s.kind === 'event' && s.name === `event:gate${pass}`) || (s.kind === 'sleep' && s.name === `gate${pass}`);
  let gate = steps.some((s) => isGate(s) && s.status !== 'succeeded');
  const open = steps.filter((s) => !isGate(s) && s.status !== 'succeeded');
  const openChildren = open.filter((s) => s.kind === 'child').length;
  if (settled && open.length > openChildren) return 'busy';
  if (openChildren === 0) return gate ? 'gate' : 'quiet';
  const kids = (await w.raw.runs.list({ parentRunId: id, limit: 1000 })).runs.filter((r) => !isTerminalRunStatus(r.status));
  if (settled && kids.length !== openChildren) return 'busy';
  for (const kid of kids) {
    const at = await gateIn(w, kid.id, pass, settled);
    if (at === 'gate') gate = true;
    else if (at === 'busy' && settled) return 'busy';
  }
  return gate ? 'gate' : settled ? 'busy' : 'quiet';
}

interface SeedReport {
  seed: number;
  stop: GatedProgram['stop'];
  program: string;
  mutation: Mutation;
  mutated: string;
  judged: Judged[];
  /** A write the check made, or a run the check did not see: the test's own failure. */
  problems: string[];
  log: string[];
  /** The clock's time when the seed ended: the next seed on the same store starts after it. */
  endedAt: number;
}

/**
 * One seed: two runs of the gated program suspended at gate 0 and gate 1 by the original build;
 * the check of the mutated build over the store; then a new engine with the mutated build (same
 * name, same version) resumes both: their gates' events sent, every event the mutated code waits
 * for more often than the original sent, the clock moved until each run ends.
 */
async function runSeed(env: CaseEnv, seed: number, verbose: boolean): Promise<SeedReport> {
  const program = gatedProgram(seed);
  const { program: candidate, mutation } = mutate(program, seed);
  const name = `check-${seed}`;
  const kidName = `${name}-kid`;
  const original = gatedBuild(name, program);
  const mutated = gatedBuild(name, candidate);
  const report: SeedReport = {
    seed,
    stop: program.stop,
    program: describeNodes(program.body),
    mutation,
    mutated: describeNodes(candidate.body),
    judged: [],
    problems: [],
    log: [],
    endedAt: env.t0,
  };
  if (verbose)
    console.log(
      `# check-prediction seed ${seed} (stopped ${program.stop})\n#   program: ${report.program}\n#   mutation: ${mutation.text}\n#   mutated: ${report.mutated}`,
    );

  const w = await engineWorld(env, original);
  report.log = w.log;
  const before = waitsPerEvent(program.body);
  const runs: { id: string; pass: number }[] = [];
  for (let pass = 0; pass < GATES; pass += 1) {
    const handle = await w.engine.startRun(name, { pass } as unknown as Json);
    for (const [event, count] of before) for (let k = 0; k < count; k += 1) await w.engine.sendEvent(handle.id, event, eventPayload(event));
    for (let g = 0; g < pass; g += 1) await w.engine.sendEvent(handle.id, `gate${g}`, eventPayload(`gate${g}`));
    runs.push({ id: handle.id, pass });
  }
  const hasKids = childBodies(program.body).size > 0;
  await w.runUntil(`seed ${seed}: both runs at their gates`, () => atGates(w, runs, program.stop === 'settled'), {
    maxTimers: MAX_TIMERS,
  });
  await stopWithin(w.engine, report, 'the original build');
  // Children in flight (holding a gate, or stopped early): checked and resumed like their parents.
  const kids = hasKids ? (await w.raw.runs.list({ workflow: kidName, status: ['pending', 'running', 'waiting'], limit: 1000 })).runs : [];
  const inFlight = runs.length + kids.length;

  const counted = countingStore(w.raw);
  const check = await checkWorkflowCode({ store: counted, workflows: mutated });
  const writes = counted.calls.filter((c) => c.write).map((c) => c.method);
  if (writes.length > 0) report.problems.push(`the check wrote: ${writes.join(', ')}`);
  const verdicts = new Map(check.runs.map((v) => [v.runId, v]));
  if (check.checked !== inFlight)
    report.problems.push(
      `the check replayed ${check.checked} runs, not the ${inFlight} in flight: ${JSON.stringify(check.runs.map((r) => [r.runId, r.workflow]))}`,
    );
  if (verbose) {
    for (const { id, pass } of runs) console.log(`#   run pass=${pass} history at its gate: ${await historyLine(w, id)}`);
    for (const kid of kids) console.log(`#   child ${kid.id} of ${kid.parent?.runId} history: ${await historyLine(w, kid.id)}`);
  }

  const engine = await w.startEngine(mutated);
  const after = waitsPerEvent(candidate.body);
  for (const { id, pass } of runs) {
    for (let g = pass; g < GATES; g += 1) await engine.sendEvent(id, `gate${g}`, eventPayload(`gate${g}`));
    for (const [event, count] of after) for (let k = before.get(event) ?? 0; k < count; k += 1) await engine.sendEvent(id, event, eventPayload(event));
  }
  const outcomes = new Map<string, Outcome>();
  for (const { id, pass } of runs) {
    let outcome: Outcome;
    try {
      outcome = outcomeOf(await w.runToEnd(id, { maxTimers: MAX_TIMERS }));
    } catch (error) {
      outcome = { status: 'stuck', message: (error as Error).message.split('\n')[0] };
    }
    outcomes.set(id, outcome);
    report.judged.push({ what: `gate ${pass}`, runId: id, verdict: verdicts.get(id), outcome });
    if (verbose) console.log(`#   run pass=${pass} history resumed: ${await historyLine(w, id)}`);
  }
  // A child is run to its end too; one cancelled (its parent failed first) says nothing of its own code.
  for (const kid of kids) {
    let outcome: Outcome;
    try {
      outcome = outcomeOf(await w.runToEnd(kid.id, { maxTimers: MAX_TIMERS }));
    } catch (error) {
      outcome = { status: 'stuck', message: (error as Error).message.split('\n')[0] };
    }
    if (outcome.status === 'cancelled') continue;
    const root = runs.find((r) => r.id === kid.parent?.runId);
    report.judged.push({
      what: root ? `child of the run at gate ${root.pass}` : `grandchild of ${kid.parent?.runId}`,
      runId: kid.id,
      verdict: verdicts.get(kid.id),
      outcome,
    });
    if (verbose) console.log(`#   child ${kid.id} history resumed: ${await historyLine(w, kid.id)}`);
  }
  await stopWithin(engine, report, 'the mutated build');
  report.endedAt = w.clock.now();
  return report;
}

/** How long an engine may take to stop before the seed reports it (an execution that never ends). */
const STOP_MS = 5_000;

/** Stops `engine`, or gives up after `STOP_MS` and says so in the report: a stop that never ends must not hang the case. */
async function stopWithin(engine: Engine, report: SeedReport, which: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), STOP_MS);
  });
  const outcome = await Promise.race([engine.stop().then(() => 'stopped' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late') report.problems.push(`the engine of ${which} did not stop within ${STOP_MS / 1000} s (an execution never ended)`);
}

/** A run's history on one line: `seq:kind:key@turn`, with the status of what is not finished. */
async function historyLine(w: EngineWorld, runId: string): Promise<string> {
  const steps = await w.raw.steps.load(runId);
  return steps.map((s) => `${s.seq}:${s.kind}:${s.key}@${s.turn ?? '-'}${s.status === 'succeeded' ? '' : `(${s.status})`}`).join(' ');
}

const describeVerdict = (v: RunVerdict | undefined): string =>
  v === undefined
    ? 'none (the check did not see the run)'
    : v.verdict === 'diverges'
      ? `diverges ${JSON.stringify(v.divergence)}`
      : `${v.verdict}${v.reason ? ` (${v.reason})` : ''}`;
const describeOutcome = (o: Outcome): string => `${o.status}${o.code ? ` ${o.code}` : ''}${o.message ? `: ${o.message}` : ''}`;

/** Runs `body` with cleanups of its own (the engines a seed leaves, stopped even when it failed), run when it ends. */
async function withCleanups<T>(env: CaseEnv, body: (env: CaseEnv) => Promise<T>): Promise<T> {
  const deferred: (() => Promise<void> | void)[] = [];
  try {
    return await body({ ...env, defer: (fn) => void deferred.push(fn) });
  } finally {
    for (const fn of deferred.reverse()) await fn();
  }
}

/** A store in a fresh namespace, destroyed by the case's cleanups. */
async function freshStore(env: CaseEnv): Promise<CaseEnv> {
  const namespace = newNamespace();
  const store = await env.harness.createStore(namespace);
  env.defer(() => (env.harness.destroyStore ? env.harness.destroyStore(store, namespace) : store.close()));
  return { ...env, store, namespace };
}

/** The first of `names` set in the environment (not blank), with its name. */
function fromEnvironment(...names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined && value.trim() !== '') return { name, value };
  }
  return undefined;
}

/**
 * The seeds to run: `CAIRN_CHECK_SEED=N` (that one, verbose), `CAIRN_CHECK_SEEDS=N` (1..N), or the
 * backend's default. Unset, the simulation's `CAIRN_SIM_SEED` / `CAIRN_SIM_SEEDS` apply here too, so
 * `cairn-conformance --seed / --seeds` (which sets those) replays or soaks both fuzzers.
 */
function seedsFor(backend: string): { seeds: number[]; verbose: boolean } {
  const one = fromEnvironment('CAIRN_CHECK_SEED', 'CAIRN_SIM_SEED');
  if (one !== undefined) {
    const seed = Number(one.value);
    assert.ok(Number.isSafeInteger(seed) && seed >= 0, `${one.name} must be a non-negative integer, got ${JSON.stringify(one.value)}`);
    return { seeds: [seed], verbose: true };
  }
  const many = fromEnvironment('CAIRN_CHECK_SEEDS', 'CAIRN_SIM_SEEDS');
  const count = many !== undefined ? Number(many.value) : defaultSeeds(backend);
  assert.ok(Number.isSafeInteger(count) && count >= 1, `${many?.name} must be a positive integer, got ${JSON.stringify(many?.value)}`);
  return { seeds: Array.from({ length: count }, (_, i) => i + 1), verbose: false };
}

async function checkPrediction(env: CaseEnv): Promise<void> {
  const { seeds, verbose } = seedsFor(env.harness.name);
  const started = performance.now();
  let mismatches = 0;
  const tally = { runs: 0, children: 0, early: 0, compatible: 0, diverges: 0, completed: 0 };
  const kinds = new Map<string, number>();
  const failures: string[] = [];
  const perStore = seedsPerStore(env.harness.name);
  let shared = env;
  let t0 = env.t0;
  for (const [i, seed] of seeds.entries()) {
    if (i > 0 && i % perStore === 0) {
      shared = await freshStore(env);
      t0 = env.t0;
    }
    let report: SeedReport;
    try {
      // Each seed's world starts its clock after the previous one's on the same store.
      report = await withCleanups({ ...shared, t0 }, (seedEnv) => runSeed(seedEnv, seed, verbose));
      t0 = report.endedAt + 60_000;
    } catch (error) {
      t0 += 86_400_000;
      mismatches += 1;
      failures.push(`seed ${seed}: the test itself threw: ${(error as Error).stack ?? String(error)}`);
      continue;
    }
    kinds.set(report.mutation.kind, (kinds.get(report.mutation.kind) ?? 0) + 1);
    if (report.stop === 'early') tally.early += 1;
    const wrong = report.judged.filter((j) => !predicted(j.verdict, j.outcome));
    for (const j of report.judged) {
      tally.runs += 1;
      if (j.what.startsWith('child')) tally.children += 1;
      if (j.verdict?.verdict === 'compatible') tally.compatible += 1;
      if (j.verdict?.verdict === 'diverges') tally.diverges += 1;
      if (j.outcome.status === 'completed') tally.completed += 1;
    }
    if (verbose)
      for (const j of report.judged) console.log(`#   run at ${j.what}: verdict ${describeVerdict(j.verdict)}; outcome ${describeOutcome(j.outcome)}`);
    if (wrong.length > 0 || report.problems.length > 0) {
      mismatches += 1;
      failures.push(
        [
          `seed ${seed} (stopped ${report.stop}): mutation: ${report.mutation.text}`,
          `  program: ${report.program}`,
          `  mutated: ${report.mutated}`,
          ...report.problems.map((p) => `  ${p}`),
          ...wrong.map((j) => `  run ${j.runId} (${j.what}): verdict ${describeVerdict(j.verdict)}; outcome ${describeOutcome(j.outcome)}`),
          ...(verbose ? report.log.map((l) => `  log: ${l}`) : []),
        ].join('\n'),
      );
    }
  }
  const ms = Math.round(performance.now() - started);
  const summary = `check-prediction: seeds=${seeds.length} mismatches=${mismatches}`;
  const mix = [...kinds].map(([k, n]) => `${k} ${n}`).join(', ');
  console.log(
    `# ${summary} (${env.harness.name}, ${ms} ms; seeds stopped early ${tally.early}; runs ${tally.runs} (${tally.children} children): ${tally.compatible} compatible, ${tally.diverges} diverge, ${tally.completed} completed; mutations: ${mix})`,
  );
  for (const failure of failures) console.log(`# ${failure.replaceAll('\n', '\n# ')}`);
  if (failures.length > 0) assert.fail(`${summary}\nReplay one with CAIRN_CHECK_SEED=<seed>:\n${failures.join('\n')}`);
}

/**
 * Adversarial: the pre-deploy check must predict what resuming does. Seeded random programs (the
 * simulation's generator, with two gates where runs suspend), each mutated as a later build would
 * be (a call inserted, removed, renamed, two swapped, a call behind `ctx.patched`, or nothing);
 * `checkWorkflowCode` of the mutated build over the store, then the runs resumed by that build:
 * `compatible` ⇔ the run went on, `diverges` ⇔ it failed with NON_DETERMINISM, on every run.
 */
export const checkPredictionGroup: CaseGroup = caseGroup('adversarial.check-prediction', 'adversarial: the pre-deploy check predicts resuming', [
  conformanceCase(
    'mutated random programs: every verdict of checkWorkflowCode is what resuming with the mutated build does; the check writes nothing',
    checkPrediction,
  ),
]);
