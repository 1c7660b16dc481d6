// `node --import tsx scripts/coverage/summary.ts DIR`: the coverage of core and the stores, from
// the lcov files that test runs with CAIRN_TEST_COVERAGE=DIR wrote there (docs/testing.md,
// "Coverage"). Prints one row per package (and core's engine), lines, branches and functions.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { mergeLcov, percent, totals, type FileCoverage } from './lcov.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** The rows of the summary: a label and the folder whose files it counts. */
export const AREAS: ReadonlyArray<readonly [string, string]> = [
  ['@cairn/core', 'packages/core/src'],
  ['  of which engine/', 'packages/core/src/engine'],
  ['  of which memory store', 'packages/core/src/memory'],
  ['@cairn/kysely', 'packages/kysely/src'],
  ['@cairn/mongodb', 'packages/mongodb/src'],
  ['@cairn/redis', 'packages/redis/src'],
];

/** One test run's merged records (keyed by absolute path), named for its lcov file. */
export interface RunCoverage {
  run: string;
  files: ReadonlyMap<string, FileCoverage>;
}

/**
 * The summary table: per area, one row per run that loaded its files, and, with two runs or more,
 * a row for all runs together counting lines only. Node numbers a file's branches and functions
 * by what V8 reported in that run (a function never called reports no blocks), so they add up
 * within one run but not across runs; line numbers do.
 */
export function summaryTable(runs: readonly RunCoverage[], root = ROOT): string[] {
  const rows: string[][] = [];
  for (const [label, folder] of AREAS) {
    const prefix = join(root, folder) + sep;
    const inArea = (path: string) => path.startsWith(prefix);
    const touching = runs.filter((r) => [...r.files.keys()].some(inArea));
    if (touching.length === 0) rows.push([label, '-', '0', '-', '-', '-']);
    touching.forEach((r, i) => {
      const t = totals(r.files, inArea);
      rows.push([i === 0 ? label : '', r.run, String(t.files), percent(t.lines), percent(t.branches), percent(t.functions)]);
    });
    if (touching.length > 1) {
      const merged = new Map<string, FileCoverage>();
      for (const r of touching) for (const [path, file] of r.files) if (inArea(path)) mergeFile(merged, path, file);
      const t = totals(merged, inArea);
      rows.push(['', 'all runs (lines)', String(t.files), percent(t.lines), '', '']);
    }
  }
  const header = ['coverage', 'run', 'files', 'lines', 'branches', 'functions'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

/** Adds `file`'s line hits into `into` (lines only: see `summaryTable`). */
function mergeFile(into: Map<string, FileCoverage>, path: string, file: FileCoverage): void {
  let target = into.get(path);
  if (!target) into.set(path, (target = { lines: new Map(), branches: new Map(), functions: new Map() }));
  for (const [ln, hits] of file.lines) target.lines.set(ln, (target.lines.get(ln) ?? 0) + hits);
}

/**
 * The folder a test run named `<package>-<script>.lcov` ran in: Node writes the paths of an lcov
 * report relative to it. `e2e` is the e2e folder; any other name is `packages/<package>`.
 */
export function runFolder(lcovName: string, root = ROOT): string {
  const pkg = lcovName.slice(0, lcovName.indexOf('-'));
  if (!pkg) throw new Error(`${lcovName}: expected <package>-<script>.lcov`);
  return pkg === 'e2e' ? join(root, 'e2e') : join(root, 'packages', pkg);
}

/** Every `*.lcov` file in `dir`, one run each (paths made absolute). */
export function readCoverageDir(dir: string, root = ROOT): RunCoverage[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.lcov'))
    .sort()
    .map((f) => ({ run: f.slice(0, -'.lcov'.length), files: mergeLcov(readFileSync(join(dir, f), 'utf8'), new Map(), runFolder(f, root)) }));
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: summary.ts DIR (a folder of .lcov files)');
    process.exit(2);
  }
  const runs = readCoverageDir(dir);
  if (runs.length === 0) {
    console.error(`no .lcov files in ${dir}`);
    process.exit(1);
  }
  console.log(`coverage of core and the stores (node --test --experimental-test-coverage), from ${runs.map((r) => r.run).join(', ')}:`);
  for (const row of summaryTable(runs)) console.log(row);
}
