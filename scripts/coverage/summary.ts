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

/** The summary table of `files` (merged lcov records keyed by absolute path). */
export function summaryTable(files: ReadonlyMap<string, FileCoverage>, root = ROOT): string[] {
  const rows = AREAS.map(([label, folder]) => {
    const prefix = join(root, folder) + sep;
    const t = totals(files, (path) => path.startsWith(prefix));
    return [label, String(t.files), percent(t.lines), percent(t.branches), percent(t.functions)];
  });
  const header = ['coverage', 'files', 'lines', 'branches', 'functions'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
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

/** Merges every `*.lcov` file in `dir` (paths made absolute); returns the merged records and the files read. */
export function readCoverageDir(dir: string, root = ROOT): { files: Map<string, FileCoverage>; read: string[] } {
  const read = readdirSync(dir)
    .filter((f) => f.endsWith('.lcov'))
    .sort();
  const files = new Map<string, FileCoverage>();
  for (const f of read) mergeLcov(readFileSync(join(dir, f), 'utf8'), files, runFolder(f, root));
  return { files, read };
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: summary.ts DIR (a folder of .lcov files)');
    process.exit(2);
  }
  const { files, read } = readCoverageDir(dir);
  if (read.length === 0) {
    console.error(`no .lcov files in ${dir}`);
    process.exit(1);
  }
  console.log(`coverage of core and the stores (node --test --experimental-test-coverage), merged from ${read.join(', ')}:`);
  for (const row of summaryTable(files)) console.log(row);
}
