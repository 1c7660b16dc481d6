/**
 * `pnpm --filter @cairn/bench run profile:check [--backend=postgres|sqlite|memory] [--runs=N] [--steps=S]
 *   [--reps=R] [--sweep=pageSize:concurrency,...] [--diverging] [--profile[=out.cpuprofile]]`
 *
 * Where the pre-deploy check's time goes. Fills a store like the bench's `check` scenario (one run
 * through the engine, cloned with SQL; default 2,000 runs of 50 steps on the bench's durable
 * PostgreSQL), then for each page size and concurrency of `--sweep` (default: core's defaults)
 * times `checkWorkflowCode` and the same reads without the replay, `--reps` times (interleaved
 * across the settings),
 * printing wall time, the bench process's CPU and the server's. `--diverging`: the candidate has a
 * step inserted halfway. `--profile`: one more check under V8's CPU profiler (default
 * `bench/results/profiles/check.cpuprofile`, not committed; `summarize-profile.ts` reads it).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkWorkflowCode } from '@cairn/core';
import { BACKENDS } from '../backends/index.js';
import { checkWorkflow, collector, openCheckStore, readsOnly, timedCheck, type Tuning } from '../scenarios/check.js';
import { Servers } from '../servers/servers.js';
import { median } from '../stats.js';

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: 'postgres' },
    runs: { type: 'string', default: '2000' },
    steps: { type: 'string', default: '50' },
    reps: { type: 'string', default: '3' },
    sweep: { type: 'string' },
    diverging: { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
  strict: true,
  args: process.argv.slice(2).map((a) => (a === '--profile' ? '--profile=' : a)),
});
const runs = Number(values.runs);
const steps = Number(values.steps);
const reps = Number(values.reps);
const sweep: Tuning[] = values.sweep
  ? values.sweep.split(',').map((pair) => {
      const [page, conc] = pair.split(':').map(Number);
      return { pageSize: page!, concurrency: conc! };
    })
  : [{}];
const log = (line: string) => process.stderr.write(`[profile:check] ${line}\n`);

const adapter = BACKENDS.find((b) => b.name === values.backend);
if (!adapter) throw new Error(`unknown backend ${values.backend}`);
const servers = new Servers(log);
const tmpDir = mkdtempSync(join(tmpdir(), 'cairn-profile-check-'));
const backend = await adapter.setup({ servers, tmpDir, log });
const gc = collector();
const cs = await openCheckStore(backend, steps);
try {
  log(`filling ${runs} runs of ${steps} steps (${cs.populatedBy})`);
  log(`filled in ${((await cs.fill(runs)) / 1000).toFixed(1)} s`);
  const workflows = [values.diverging ? checkWorkflow(Math.floor(steps / 2)) : checkWorkflow()];
  const verdict = values.diverging ? 'diverges' : 'compatible';
  const server = backend.serverCpuMs;
  await timedCheck(cs.store, workflows, {}, runs, verdict, gc, server);
  gc();
  log(
    `after a warm-up check and a full GC: heap used ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1)} MiB, RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(1)} MiB`,
  );
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const f = (ms: number | undefined) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(2)} s`);
  // Repetitions interleaved across the sweep, so that a change in the machine's load falls on every setting alike.
  const checks = sweep.map((): Awaited<ReturnType<typeof timedCheck>>[] => []);
  const reads = sweep.map((): Awaited<ReturnType<typeof readsOnly>>[] => []);
  for (let i = 0; i < reps; i++) {
    for (const [k, tuning] of sweep.entries()) {
      checks[k]!.push(await timedCheck(cs.store, workflows, tuning, runs, verdict, gc, server));
      reads[k]!.push(await readsOnly(cs.store, tuning, runs, server));
    }
  }
  const m = (xs: (number | undefined)[]) => (xs.some((x) => x === undefined) ? undefined : median(xs as number[]));
  for (const [k, tuning] of sweep.entries()) {
    const c = checks[k]!;
    const r = reads[k]!;
    process.stdout.write(
      `pageSize=${tuning.pageSize ?? 'default'} concurrency=${tuning.concurrency ?? 'default'}: check ${f(m(c.map((x) => x.wallMs)))} wall (${c.map((x) => f(x.wallMs)).join(', ')}), client CPU ${f(m(c.map((x) => x.cpuMs)))}, server CPU ${f(m(c.map((x) => x.serverCpuMs)))}; reads alone ${f(m(r.map((x) => x.wallMs)))} wall, client CPU ${f(m(r.map((x) => x.cpuMs)))}, server CPU ${f(m(r.map((x) => x.serverCpuMs)))}; peak RSS growth ${mib(Math.max(...c.map((x) => x.peakRssGrowth)))}, peak heap growth ${mib(Math.max(...c.map((x) => x.peakHeapGrowth)))}\n`,
    );
  }
  process.stdout.write(`RSS at the end ${mib(process.memoryUsage().rss)}\n`);
  if (values.profile !== undefined) {
    const out = resolve(values.profile || join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'results', 'profiles', 'check.cpuprofile'));
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const t0 = performance.now();
    const report = await checkWorkflowCode({ store: cs.store, workflows, ...sweep[0] });
    const wall = performance.now() - t0;
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(profile));
    process.stdout.write(`profiled check: ${report.checked} runs in ${f(wall)} (profile: ${out})\n`);
  }
} finally {
  await cs.close();
  await backend.close();
  await servers.stopAll();
  rmSync(tmpDir, { recursive: true, force: true });
}
