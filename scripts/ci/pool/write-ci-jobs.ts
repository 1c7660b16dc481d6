// Writes the job list of CI's test pool (ci-jobs.ts) for .ci/run, from turbo's dry runs of
// `pnpm test` and `pnpm test:unit` in the checkout.
//
//   node --import tsx scripts/ci/pool/write-ci-jobs.ts --out FILE --test-log FILE --unit-log FILE
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ciJobs, tasksOfDryRun, type TurboDryRun, type TurboTask } from './ci-jobs.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const { values } = parseArgs({
  options: { out: { type: 'string' }, 'test-log': { type: 'string' }, 'unit-log': { type: 'string' } },
  strict: true,
});
if (values.out === undefined || values['test-log'] === undefined || values['unit-log'] === undefined) {
  throw new Error('usage: write-ci-jobs.ts --out FILE --test-log FILE --unit-log FILE');
}

/** The tasks of the root script `name` (a `turbo run ...` command), from turbo's dry run of it. */
function tasksOf(name: string): TurboTask[] {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const words = (scripts[name] ?? '').split(/\s+/);
  if (words[0] !== 'turbo' || words[1] !== 'run') throw new Error(`pnpm ${name} is not a turbo run: ${String(scripts[name])}`);
  const args = [...words.slice(1).filter((w) => !w.startsWith('--concurrency') && w !== '--continue'), '--dry=json'];
  const out = execFileSync(join(ROOT, 'node_modules', '.bin', 'turbo'), args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return tasksOfDryRun(JSON.parse(out) as TurboDryRun);
}

const durations = JSON.parse(readFileSync(join(import.meta.dirname, 'durations.json'), 'utf8')) as Record<string, unknown>;
const jobs = ciJobs({ node24: tasksOf('test'), node22: tasksOf('test:unit'), durations, testLog: values['test-log'], unitLog: values['unit-log'] });
writeFileSync(values.out, `${JSON.stringify(jobs, null, 2)}\n`);
console.log(`${jobs.length} jobs: ${jobs.map((j) => j.name).join(', ')}`);
