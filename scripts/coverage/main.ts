// `pnpm coverage`: the tests of core and the stores with Node's built-in coverage, then a summary
// (scripts/coverage/summary.ts). Each run below writes an lcov file to coverage/ at the root
// because CAIRN_TEST_COVERAGE (core's tests, the memory conformance, each store's own tests) and
// CAIRN_TEST_COVERAGE_CONFORMANCE (the server stores' conformance) name that folder (see the
// packages' test scripts). CI's `pnpm test` phase sets only the first: coverage costs about 80 %
// more CPU in the runs it measures, and the server conformance runs are most of CI's test time.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readCoverageDir, summaryTable } from './summary.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = join(ROOT, 'coverage');

/** Package and script: core's unit tests, the memory store's conformance, each store's tests and conformance. */
const RUNS: ReadonlyArray<readonly [string, string]> = [
  ['@cairn/core', 'test'],
  ['@cairn/conformance', 'test:conformance'],
  ['@cairn/kysely', 'test'],
  ['@cairn/kysely', 'test:conformance'],
  ['@cairn/mongodb', 'test'],
  ['@cairn/mongodb', 'test:conformance'],
  ['@cairn/redis', 'test'],
  ['@cairn/redis', 'test:conformance'],
];

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const failed: string[] = [];
for (const [pkg, script] of RUNS) {
  console.log(`=== [coverage] ${pkg} ${script}`);
  const result = spawnSync('pnpm', ['--filter', pkg, 'run', script], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, CAIRN_TEST_COVERAGE: dir, CAIRN_TEST_COVERAGE_CONFORMANCE: dir },
  });
  if (result.status !== 0) failed.push(`${pkg} ${script}`);
}
for (const row of summaryTable(readCoverageDir(dir))) console.log(row);
if (failed.length > 0) {
  console.error(`failed: ${failed.join(', ')}`);
  process.exit(1);
}
