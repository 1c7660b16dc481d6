/**
 * `pnpm bench [--smoke] [--only=memory,sqlite,postgres,mysql,mongodb,redis] [--scenarios=inline,replay,wake,latency,local,idle,cpu,flow,floor,processes,dispatch,results,fairness,observability,check,codec,streams,requests,bulk,tags] [--workers=1,2,4,8] [--out=path] [--render[=path]]`
 * (bench/src/args.ts; an unknown flag or name exits 2 with the usage)
 *
 * Measures every backend in one run (see docs/benchmarks.md), prints Markdown tables and writes
 * `bench/results/latest.json` (smoke: `smoke.tmp.json`, not committed). Round-trip targets are checked in every
 * mode; `--smoke` uses tiny sizes, asserts that each scenario completes and that the round-trip
 * targets hold, never a timing, and exits non-zero otherwise.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_USAGE, parseBenchArgs, type BenchArgs, type ScenarioName } from './args.js';
import { BACKENDS, NOT_LANDED } from './backends/index.js';
import type { BackendInstance } from './backends/types.js';
import { FULL, SMOKE } from './config.js';
import { loadAverage, machineInfo } from './machine.js';
import { QUEUES } from './queues/index.js';
import { renderMarkdown } from './report/markdown.js';
import { readResults } from './report/read-results.js';
import { checkTargets } from './report/targets.js';
import type { BackendReport, BenchResults, ScenarioError } from './results.js';
import { fairness } from './scenarios/fairness.js';
import { inlineSteps } from './scenarios/inline-steps.js';
import { localThroughput } from './scenarios/local-throughput.js';
import { pgFloor } from './scenarios/pg-floor.js';
import { processThroughput } from './scenarios/process-throughput.js';
import { resultLatency } from './scenarios/result-latency.js';
import { replayGrowth } from './scenarios/replay.js';
import { wakeCost } from './scenarios/wake.js';
import { observabilityOverhead } from './scenarios/observability.js';
import { otelVariant } from './scenarios/otel-variant.js';
import { idleCost } from './scenarios/idle-cost.js';
import { storeDispatch } from './scenarios/store-dispatch.js';
import { pushedResults } from './scenarios/pushed-results.js';
import { checkScenario } from './scenarios/check.js';
import { cpuPerStep } from './scenarios/cpu-per-step.js';
import { codecCost } from './scenarios/codec.js';
import { streamLatency } from './scenarios/stream-latency.js';
import { requestLatency } from './scenarios/request-latency.js';
import { serverless } from './scenarios/serverless.js';
import { bulkCancel } from './scenarios/bulk-cancel.js';
import { tagListing } from './scenarios/tag-listing.js';
import { flowControl } from './scenarios/flow.js';
import { engineLog } from './scenarios/workflows.js';
import { Servers } from './servers/servers.js';
import { nowMs } from './stats.js';

const args = process.argv.slice(2);
let parsed: BenchArgs;
try {
  parsed = parseBenchArgs(args);
} catch (error) {
  // A misspelled flag must not start an hour of measuring the wrong thing.
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${BENCH_USAGE}\n`);
  process.exit(2);
}
if (parsed.help) {
  process.stdout.write(`${BENCH_USAGE}\n`);
  process.exit(0);
}
const { smoke, only, scenarios, workers } = parsed;
const base = smoke ? SMOKE : FULL;
// --workers=1,8: the worker process counts of the processes and dispatch scenarios.
const config = workers === undefined ? base : { ...base, processThroughput: { ...base.processThroughput, workers }, dispatch: { ...base.dispatch, workers } };
const wants = (name: ScenarioName) => !scenarios || scenarios.includes(name);
const here = dirname(fileURLToPath(import.meta.url));
const outPath = resolve(parsed.out ?? join(here, '..', 'results', smoke ? 'smoke.tmp.json' : 'latest.json'));

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** How long one scenario may take before it is failed (a hang must not hang CI). */
const SCENARIO_TIMEOUT_MS = Number(process.env['CAIRN_BENCH_SCENARIO_TIMEOUT_MS']) || (smoke ? 60_000 : 600_000);

async function scenario<T>(errors: ScenarioError[], name: string, fn: () => Promise<T>, incidents?: string[]): Promise<T | undefined> {
  const t0 = nowMs();
  const abandoned0 = engineLog.abandoned;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`did not finish within ${SCENARIO_TIMEOUT_MS / 1000} s`)), SCENARIO_TIMEOUT_MS);
    });
    const result = await Promise.race([fn(), timeout]);
    log(`  ${name}: done in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
    return result;
  } catch (error) {
    log(`  ${name}: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    errors.push({ scenario: name, message: message(error) });
    return undefined;
  } finally {
    clearTimeout(timer);
    const abandoned = engineLog.abandoned - abandoned0;
    if (abandoned > 0) {
      const line = `${name}: ${abandoned} execution(s) abandoned and resumed by recovery (last: ${engineLog.last})`;
      log(`  ${line}`);
      incidents?.push(line);
    }
  }
}

async function main(): Promise<number> {
  const started = nowMs();
  const machine = machineInfo();
  const servers = new Servers(log);
  // Interrupted: stop the servers this run started (by their PIDs) before leaving.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping servers`);
      void servers.stopAll().finally(() => process.exit(130));
    });
  }
  const tmpDir = mkdtempSync(join(tmpdir(), 'cairn-bench-'));
  const results: BenchResults = {
    mode: config.mode,
    command: `pnpm bench${args.length ? ` ${args.join(' ')}` : ''}`,
    machine,
    backends: [],
    skipped: [],
    processThroughput: [],
    storeDispatch: [],
    pushedResults: [],
    fairness: [],
    errors: [],
    notes: [],
    targets: [],
    durationMs: 0,
  };
  const instances = new Map<string, BackendInstance>();
  try {
    for (const adapter of BACKENDS) {
      if (only && !only.includes(adapter.name)) continue;
      log(`${adapter.title}: setting up`);
      let backend: BackendInstance;
      try {
        backend = await adapter.setup({ servers, tmpDir, log });
      } catch (error) {
        log(`${adapter.title}: left out: ${message(error)}`);
        results.skipped.push({ name: adapter.name, title: adapter.title, reason: message(error) });
        if (smoke && process.env['CAIRN_BENCH_REQUIRE'] !== '0') results.errors.push({ scenario: `${adapter.title} setup`, message: message(error) });
        continue;
      }
      instances.set(backend.name, backend);
      machine.servers[backend.title] = backend.server;
      const report: BackendReport = {
        name: backend.name,
        title: backend.title,
        server: backend.server,
        driverCounted: backend.driverCounted,
        errors: [],
        incidents: [],
      };
      results.backends.push(report);
      const scaled = backend.scale?.(config);
      const cfg = scaled?.config ?? config;
      if (scaled) report.incidents.push(`sizes reduced: ${scaled.note}`);
      const e = report.errors;
      const inc = report.incidents;
      const inline = !wants('inline')
        ? undefined
        : await scenario(
            e,
            'inline steps',
            () => inlineSteps(backend, { ...cfg.inline, ...(backend.writeTransactions ? { writeTransactions: backend.writeTransactions } : {}) }),
            inc,
          );
      if (inline) report.inline = inline;
      const replay = !wants('replay') ? undefined : await scenario(e, 'replay growth', () => replayGrowth(backend, cfg.replay), inc);
      if (replay) report.replay = replay;
      // Wake cost against history length (issue 30): memory, SQLite and PostgreSQL, as the issue names.
      const wake =
        !wants('wake') || !['memory', 'sqlite', 'postgres'].includes(backend.name)
          ? undefined
          : await scenario(e, 'wake cost', () => wakeCost(backend, cfg.wake), inc);
      if (wake) report.wake = wake;
      const latency = !wants('latency') ? undefined : await scenario(e, 'result latency', () => resultLatency(backend, cfg.latency), inc);
      if (latency) report.latency = latency;
      const local = !wants('local') ? undefined : await scenario(e, 'local queue throughput', () => localThroughput(backend, cfg.localThroughput), inc);
      if (local) report.localThroughput = local;
      const idle = !wants('idle') ? undefined : await scenario(e, 'idle cost', () => idleCost(backend, cfg.idle.passes), inc);
      if (idle) report.idle = idle;
      // Client CPU per step on the in-process and PostgreSQL stores (the issue's targets name memory and PostgreSQL).
      const cpu =
        !wants('cpu') || !['memory', 'sqlite', 'postgres'].includes(backend.name)
          ? undefined
          : await scenario(e, 'engine CPU per step', () => cpuPerStep(backend, cfg.cpu), inc);
      if (cpu) report.cpu = cpu;
      // Flow control needs slots: a store without them is noted (`null`), not failed.
      const flow = !wants('flow') ? undefined : await scenario(e, 'flow control', () => flowControl(backend, cfg.flow), inc);
      if (flow) report.flow = flow;
      else if (flow === null) inc.push('flow control: not measured (the store has no slots)');
      // The pre-deploy check (issue 27): PostgreSQL (the target) and SQLite filled by cloning one run with SQL, memory through the engine.
      const check =
        !wants('check') || !['memory', 'sqlite', 'postgres'].includes(backend.name)
          ? undefined
          : await scenario(e, 'pre-deploy check', () => checkScenario(backend, cfg.check), inc);
      if (check) report.check = check;
      // The payload codec (issue 28): what encrypting every payload adds to a step.
      const codec =
        !wants('codec') || !['memory', 'sqlite', 'postgres'].includes(backend.name)
          ? undefined
          : await scenario(e, 'payload codec cost', () => codecCost(backend, cfg.codec), inc);
      if (codec) report.codec = codec;
      // Streams (issue 31): a chunk's latency to a reader on another connection.
      const streams = !wants('streams') ? undefined : await scenario(e, 'stream reader latency', () => streamLatency(backend, cfg.streams), inc);
      if (streams) report.streams = streams;
      // Requests (issue 31): a request's round trip to a suspended run from another connection.
      const requests = !wants('requests') ? undefined : await scenario(e, 'request latency', () => requestLatency(backend, cfg.requests), inc);
      if (requests) report.requests = requests;
      // Serverless (issue 35): the push handler's cost per push; a long run through a dispatcher beside a worker.
      const pushedWork =
        !wants('serverless') || !['memory', 'sqlite', 'postgres', 'redis'].includes(backend.name)
          ? undefined
          : await scenario(e, 'serverless handler', () => serverless(backend, cfg.serverless), inc);
      if (pushedWork) {
        report.serverless = pushedWork;
        log(
          `  serverless: push ${pushedWork.pushServerP50Ms.toFixed(2)} ms vs direct ${pushedWork.directP50Ms.toFixed(2)} ms (handler +${pushedWork.handlerOverheadMs.toFixed(2)} ms); ${pushedWork.runSteps}-step run: worker ${pushedWork.workerRunP50Ms.toFixed(1)} ms, dispatcher ${pushedWork.dispatchedRunP50Ms.toFixed(1)} ms (${pushedWork.ratio.toFixed(2)}x)`,
        );
      }
      // Bulk operations (issue 32): one cancel of many runs; the target names PostgreSQL.
      const bulk =
        !wants('bulk') || !['memory', 'sqlite', 'postgres'].includes(backend.name)
          ? undefined
          : await scenario(e, 'bulk cancel', () => bulkCancel(backend, cfg.bulk), inc);
      if (bulk) report.bulk = bulk;
      // Tags (issue 32): the first page of runs found by tag.
      const tags = !wants('tags') ? undefined : await scenario(e, 'tag listing', () => tagListing(backend, cfg.tags), inc);
      if (tags) report.tags = tags;
    }
    for (const s of NOT_LANDED) if (!only || only.includes(s.name)) results.skipped.push({ name: s.name, title: s.title, reason: s.reason });

    // The physical floor on the same (durable) PostgreSQL.
    const pgBackend = instances.get('postgres');
    const pgReport = results.backends.find((b) => b.name === 'postgres');
    if (pgBackend && pgReport?.inline && wants('floor')) {
      const server = await servers.postgres();
      const floor = await scenario(results.errors, 'PostgreSQL floor', () => pgFloor(pgBackend, server.url, server.product, config.floor));
      if (floor) {
        results.floor = {
          ...floor,
          cairnAsyncCommitsPerStep: pgReport.inline.asyncCommitsPerStep,
          ...(pgReport.inline.writeTransactionsPerStep !== undefined ? { cairnWriteTransactionsPerStep: pgReport.inline.writeTransactionsPerStep } : {}),
        };
      }
    }

    // Worker processes on the distributed queues, each with the store it pairs with.
    for (const queue of wants('processes') ? QUEUES : []) {
      const backend = instances.get(queue.store);
      if (!backend) {
        results.notes.push(`${queue.name}: not measured (its store, ${queue.store}, did not run)`);
        continue;
      }
      const url = queue.store === 'postgres' ? (await servers.postgres()).url : (await servers.service('redis')).url;
      const r = await scenario(
        results.errors,
        `${queue.name} worker processes`,
        () => processThroughput(backend, queue, url, config.processThroughput),
        results.notes,
      );
      if (r) results.processThroughput.push(r);
    }

    // No distributed queue: worker processes on their local queue, runs reaching them through the store.
    for (const name of wants('dispatch') ? (['postgres', 'redis'] as const) : []) {
      const backend = instances.get(name);
      if (!backend) continue;
      const url = name === 'postgres' ? (await servers.postgres()).url : (await servers.service('redis')).url;
      const d = await scenario(results.errors, `${backend.title} store dispatch`, () => storeDispatch(backend, url, config.dispatch), results.notes);
      if (d) results.storeDispatch.push(d);
    }

    // result() of a run executing in another process: on the completion signal, and polling (issue 30).
    for (const name of wants('results') ? (['postgres', 'redis'] as const) : []) {
      const backend = instances.get(name);
      if (!backend) continue;
      const url = name === 'postgres' ? (await servers.postgres()).url : (await servers.service('redis')).url;
      const p = await scenario(results.errors, `${backend.title} pushed results`, () => pushedResults(backend, url, config.results), results.notes);
      if (p) (results.pushedResults ??= []).push(p);
    }

    // Fairness of shared-groups: the local queue (the engine's default), and pg-boss, whose groups
    // are the other implementation of the capability (BullMQ has none).
    const memory = instances.get('memory');
    if (memory && wants('fairness')) {
      const f = await scenario(results.errors, 'fairness (local queue)', () => fairness(memory, config.fairness), results.notes);
      if (f) results.fairness.push(f);
    }
    // What lifecycle events cost, with nobody listening and with a subscriber (memory store, one process).
    if (instances.has('memory') && wants('observability')) {
      const o = await scenario(
        results.errors,
        'observability overhead',
        () => observabilityOverhead({ ...config.observability, extra: [otelVariant] }),
        results.notes,
      );
      if (o) results.observability = o;
    }
    const pgForFairness = instances.get('postgres');
    const boss = QUEUES.find((q) => q.name === 'pg-boss');
    if (pgForFairness && boss && wants('fairness')) {
      const url = (await servers.postgres()).url;
      const f = await scenario(
        results.errors,
        'fairness (pg-boss)',
        async () => fairness(pgForFairness, { ...config.fairness, queue: await boss.create(url), queueName: 'pg-boss' }),
        results.notes,
      );
      if (f) results.fairness.push(f);
    }
  } finally {
    for (const backend of instances.values()) await backend.close().catch(() => {});
    await servers.stopAll();
    rmSync(tmpDir, { recursive: true, force: true });
  }

  results.durationMs = nowMs() - started;
  machine.loadAtEnd = loadAverage();
  results.targets = checkTargets(results);
  results.notes.push(
    `${machine.cores} cores: worker processes beyond ${machine.cores} compete for the same CPUs as the database servers and the submitting process.`,
  );
  const markdown = renderMarkdown(results);
  process.stdout.write(`${markdown}\n`);
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(outPath, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${outPath}`);

  const errors = results.errors.length + results.backends.reduce((n, b) => n + b.errors.length, 0);
  const failed = results.targets.filter((t) => t.enforced && !t.holds);
  if (errors > 0) log(`${errors} scenario(s) failed`);
  if (failed.length > 0) log(`round-trip targets missed: ${failed.map((t) => `${t.subject}: ${t.target} (${t.measured})`).join('; ')}`);
  return errors > 0 || failed.length > 0 ? 1 : 0;
}

/** `--render[=path]`: print the Markdown report of a saved JSON result again (no measuring). */
function render(): number {
  const path = typeof parsed.render === 'string' ? resolve(parsed.render) : outPath;
  let results: BenchResults;
  try {
    results = readResults(readFileSync(path, 'utf8'), path);
  } catch (error) {
    // A missing or foreign file is the user's input, not a bench defect: its reason, no stack.
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  results.targets = checkTargets(results);
  process.stdout.write(`${renderMarkdown(results)}\n`);
  return 0;
}

(parsed.render !== undefined ? Promise.resolve(render()) : main()).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
