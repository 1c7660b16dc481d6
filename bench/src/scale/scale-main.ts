/**
 * `pnpm --filter @cairn/bench scale [--runs=1000000] [--only=postgres,sqlite,redis] [--dir=/tmp/cairn-scale] [--reps=15] [--measure=<regexp>] [--redis-steps=1] [--load-only] [--drop]`
 *
 * The million-runs bench (docs/benchmarks.md, "A million runs"): loads `--runs` finished runs of
 * ten steps each into a kept data directory once (PostgreSQL, SQLite, Redis), checks that the
 * engine reads a loaded run exactly as one it wrote, then measures an inline step, a claim, a
 * recovery pass, `listRuns` first pages and a retention pass on the loaded store and on an empty
 * one side by side (medians, ratios), with table sizes and the query plans of the listings.
 * On the SQL stores every loaded run carries two tags (`scaleTags`), and the tag listings are measured too.
 * `--measure=tag` measures only the operations whose name matches (`inline`, `claim`, `recovery`,
 * `listRuns <query>`, `retention`).
 * Not part of `pnpm bench` or CI; `--runs=2000` is a quick check that it still works. `--drop`
 * deletes the data directory at the end; `--load-only` loads (or finds), verifies and sizes, measuring nothing.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { cpuClock, measureScale, listQueries, type ScaleFigure } from './scale-measure.js';
import { LOAD_SPAN_MS, postgresScale, redisScale, SMALL_RUNS, sqliteScale, type ScaleBackend, type SizeRow } from './scale-targets.js';
import { verifyLoaded } from './verify-loaded.js';
import { mongoScale } from './mongo-target.js';

const { values } = parseArgs({
  strict: true,
  allowPositionals: false,
  options: {
    runs: { type: 'string', default: '1000000' },
    only: { type: 'string', default: 'postgres,sqlite,redis' },
    dir: { type: 'string', default: '/tmp/cairn-scale' },
    reps: { type: 'string', default: '15' },
    out: { type: 'string' },
    measure: { type: 'string' },
    'redis-steps': { type: 'string', default: '1' },
    drop: { type: 'boolean', default: false },
    'load-only': { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const redisSteps = Number(values['redis-steps']);
if (!Number.isInteger(redisSteps) || redisSteps < 1) throw new Error(`--redis-steps must be a positive integer (got ${values['redis-steps']})`);
const reps = Number(values.reps);
if (!Number.isInteger(runs) || runs < 1000) throw new Error(`--runs must be an integer ≥ 1000 (got ${values.runs})`);
if (!Number.isInteger(reps) || reps < 1) throw new Error(`--reps must be a positive integer (got ${values.reps})`);
const only = values.only.split(',').filter(Boolean);
for (const name of only)
  if (!['postgres', 'sqlite', 'redis', 'mongodb'].includes(name)) throw new Error(`--only: unknown backend '${name}' (postgres, sqlite, redis, mongodb)`);
const dir = resolve(values.dir);
const here = dirname(fileURLToPath(import.meta.url));
// One file per set of backends (they are measured one at a time here, each when its load is done).
const outPath = resolve(values.out ?? join(here, '..', '..', 'results', runs >= 1_000_000 ? `scale-${only.join('-')}.json` : 'scale-small.tmp.json'));
const log = (line: string) => process.stderr.write(`[scale] ${line}\n`);

interface BackendResult {
  name: string;
  title: string;
  server: string;
  loadSeconds?: number;
  counts: { runs: number; steps: number };
  verified: string[];
  sizes: SizeRow[];
  figures: ScaleFigure[];
  plans: Record<string, string[]>;
}

const FACTORIES: Record<string, (dir: string, runs: number, batch: number, log: (line: string) => void) => Promise<ScaleBackend>> = {
  postgres: postgresScale,
  sqlite: sqliteScale,
  redis: (dir, n, batch, log) => redisScale(dir, n, batch, log, redisSteps),
  mongodb: mongoScale,
};

async function one(name: string): Promise<BackendResult> {
  const backend = await FACTORIES[name]!(dir, runs, name === 'redis' || name === 'mongodb' ? 20_000 : 100_000, log);
  try {
    log(`${backend.title}: ${backend.server}`);
    const t0 = Date.now();
    const { target: loaded, fresh } = await backend.loaded();
    const loadSeconds = fresh ? (Date.now() - t0) / 1000 : undefined;
    if (fresh) log(`${backend.title}: loaded in ${loadSeconds} s`);
    const empty = await backend.empty();
    try {
      const counts = await loaded.counts();
      log(`${backend.title}: ${counts.runs} runs, ${counts.steps} steps`);
      const verified = await verifyLoaded(loaded);
      log(`${backend.title}: the engine reads loaded runs ${verified.join(', ')} as their templates`);
      const sizes = await loaded.sizes();
      const newest = (await loaded.engine.listRuns({ workflow: 'scale-w7', limit: 1, createdBefore: Date.now() - 3600_000 })).runs[0];
      const window = {
        loadedFrom: Date.now() - LOAD_SPAN_MS,
        loadedTo: newest?.createdAt ?? Date.now(),
        someRunId: newest?.id ?? 'none',
        // The SQL loaders tag every run (`scaleTags`); the Redis and MongoDB loaders copy untagged templates.
        tags: name === 'postgres' || name === 'sqlite',
      };
      const only = values.measure === undefined ? undefined : new RegExp(values.measure);
      const cpu = cpuClock(backend.serverCpuMs?.bind(backend));
      const figures = values['load-only']
        ? []
        : await measureScale([empty, loaded], { reps, warmup: 3, inlineSteps: 10, pruneRuns: 1000, pruneReps: 5 }, window, log, cpu, only);
      const plans: Record<string, string[]> = {};
      if (loaded.plans) {
        for (const { name: q, query } of listQueries(window.loadedFrom, window.loadedTo, window.someRunId, window.tags)) {
          if (only !== undefined && !only.test(`listRuns ${q}`)) continue;
          plans[`listRuns ${q}`] = await loaded.plans(
            () => loaded.engine.listRuns({ ...query, limit: 50 }),
            (s) => /from "?cairn_runs"?/.test(s),
          );
        }
        plans['recovery pass'] = await loaded.plans(
          () => loaded.engine.recover(),
          (s) => /^\s*select/i.test(s),
        );
        plans['retention: runs.listEnded'] = await loaded.plans(
          () => loaded.store.runs.listEnded({ status: 'completed', updatedBefore: Date.now() - 45 * 24 * 3600_000, limit: 100 }),
          (s) => /from "?cairn_runs"?/.test(s),
        );
      }
      return {
        name,
        title: backend.title,
        server: backend.server,
        ...(loadSeconds === undefined ? {} : { loadSeconds }),
        counts,
        verified,
        sizes,
        figures,
        plans,
      };
    } finally {
      await empty.close();
      await loaded.close();
    }
  } finally {
    await backend.close();
  }
}

const fmtBytes = (n: number) =>
  n >= 1024 ** 3
    ? `${(n / 1024 ** 3).toFixed(2)} GiB`
    : n >= 1024 ** 2
      ? `${(n / 1024 ** 2).toFixed(1)} MiB`
      : n >= 1024
        ? `${(n / 1024).toFixed(1)} KiB`
        : `${n} B`;
const fmtMs = (ms: number) => (ms >= 10 ? `${ms.toFixed(1)} ms` : ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(0)} µs`);

function markdown(results: BackendResult[], load: { start: number[]; end: number[] }): string {
  const lines: string[] = [];
  lines.push(
    `Command: \`pnpm --filter @cairn/bench scale --runs=${runs}${values.only === 'postgres,sqlite,redis' ? '' : ` --only=${values.only}`} --reps=${reps}${redisSteps === 1 ? '' : ` --redis-steps=${redisSteps}`}${values.measure === undefined ? '' : ` --measure='${values.measure}'`}\``,
  );
  lines.push(
    `Load average (1, 5, 15 min): ${load.start.map((v) => v.toFixed(2)).join(', ')} at the start, ${load.end.map((v) => v.toFixed(2)).join(', ')} at the end.`,
  );
  for (const r of results) {
    lines.push('', `#### ${r.title}: ${r.counts.runs.toLocaleString('en-US')} runs, ${r.counts.steps.toLocaleString('en-US')} steps`, '', r.server);
    if (r.loadSeconds !== undefined) lines.push(`Loaded in ${r.loadSeconds.toFixed(0)} s.`);
    lines.push(`Verified: the engine reads loaded runs ${r.verified.join(', ')} exactly as their templates (record and steps).`, '');
    lines.push(
      `| operation | small store (${SMALL_RUNS.toLocaleString('en-US')} runs) | loaded store | × small | p95 small | p95 loaded | CPU small | CPU loaded | CPU × small | |`,
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const f of r.figures)
      lines.push(
        `| ${f.operation} | ${fmtMs(f.empty)} | ${fmtMs(f.loaded)} | ${f.ratio.toFixed(2)} | ${fmtMs(f.p95.empty)} | ${fmtMs(f.p95.loaded)} | ${fmtMs(f.cpu.empty)} | ${fmtMs(f.cpu.loaded)} | ${f.cpu.ratio.toFixed(2)} | ${f.note ?? ''} |`,
      );
    lines.push('', '| table | rows | data | indexes | bytes per run | bytes per step |', '| --- | --- | --- | --- | --- | --- |');
    for (const s of r.sizes) {
      const total = s.dataBytes + s.indexBytes;
      // Redis: the first rows are one run's own keys (their bytes are per run already), the global indexes are per entry.
      const perRun = r.name === 'redis' ? (s.table.endsWith('(one run)') ? total : s.rows > 0 ? total / s.rows : 0) : total / r.counts.runs;
      const perStep = r.name === 'redis' ? (/^(step|attempt) hashes/.test(s.table) ? total / Math.max(1, s.rows) : undefined) : total / r.counts.steps;
      lines.push(
        `| ${s.table} | ${s.rows.toLocaleString('en-US')} | ${fmtBytes(s.dataBytes)} | ${fmtBytes(s.indexBytes)} | ${Math.round(perRun).toLocaleString('en-US')} | ${perStep === undefined ? '' : Math.round(perStep).toLocaleString('en-US')} |`,
      );
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const start = loadavg();
  const results: BackendResult[] = [];
  for (const name of only) results.push(await one(name));
  const end = loadavg();
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(outPath, `${JSON.stringify({ runs, reps, loadAverage: { start, end }, results }, null, 2)}\n`);
  process.stdout.write(`${markdown(results, { start, end })}\n`);
  log(`results in ${outPath}`);
  if (values.drop) {
    rmSync(dir, { recursive: true, force: true });
    log(`removed ${dir}`);
  }
}

await main();
