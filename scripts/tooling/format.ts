/**
 * `pnpm format` rewrites every file Biome covers (biome.jsonc) in the repository's style;
 * `pnpm format --check` changes nothing, prints what differs and exits 1 when any file would change
 * (CI runs it). An unknown flag prints the usage and exits 2.
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const USAGE = `Usage: pnpm format [--check]

  (no flag)  write Biome's formatting into every covered file
  --check    change nothing; exit 1 when a file is not formatted`;

let check: boolean;
try {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { check: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  check = values.check;
} catch (error) {
  console.error(`${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}

// `biome format` without --write is Biome's own check mode: it writes nothing and fails on a difference.
const biome = spawnSync('biome', ['format', ...(check ? [] : ['--write']), '.'], { stdio: 'inherit' });
if (biome.error) throw biome.error;
process.exitCode = biome.status ?? 1;
