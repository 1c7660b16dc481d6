#!/usr/bin/env node
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { OutcomeCounts } from './suite/reporters/outcome-count-reporter.js';
import { stickyMode } from './suite/engine/sticky-knob.js';

const USAGE = `Usage: cairn-conformance <harness-file> [--only <group>[,<group>...]] [--reporter <spec|tap|dot>] [--seed <n> | --seeds <n>] [--sticky <on|off|evict>]

Runs the Cairn conformance suite against the harness that <harness-file> exports as its default
export (a ConformanceHarness object, or a function returning one). TypeScript files are loaded
through tsx. The exit code is the number of failed cases (0: the backend conforms).

  --only      run only these groups, by id prefix: store, store.runs, engine, adversarial.crash-points, ...
  --reporter  the node:test reporter for the output (default: spec)
  --seed      the two fuzz cases (adversarial.simulation, adversarial.check-prediction) run only this seed, verbosely
  --seeds     the two fuzz cases run seeds 1..n (a soak) instead of their default budget
  --sticky    kept suspended executions in the suite's engines: on (the default), off (every wake
              replays), or evict (kept, and dropped at random: the fallback to a replay exercised)`;

/** Parsed command line. */
interface CliArgs {
  harness: string;
  only: string[];
  reporter: string;
  /** `CAIRN_SIM_SEED` / `CAIRN_SIM_SEEDS` for the simulation case, `CAIRN_STICKY` for every engine. */
  simulation: Record<string, string>;
}

/** The flags, for `node:util` `parseArgs` (strict: an unknown or misspelled flag is an error). */
const OPTIONS = {
  only: { type: 'string', multiple: true },
  reporter: { type: 'string', default: 'spec' },
  seed: { type: 'string' },
  seeds: { type: 'string' },
  sticky: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A seed flag's value: a safe integer of at least `min`, as digits (it is passed on in the environment). */
function seedValue(flag: string, text: string, min: number): string {
  if (!/^\d+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text)))
    throw new Error(`${flag} needs an integer of at least ${min}, got ${JSON.stringify(text)}`);
  return text;
}

/** The parsed command line, or the text to print: the usage (after `--help`), or an error and the usage. */
function readArgs(argv: string[]): CliArgs | string {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    if (values.help) return USAGE;
    if (positionals.length > 1) return `Only one harness file, got ${positionals.join(' and ')}\n\n${USAGE}`;
    const harness = positionals[0];
    if (harness === undefined) return USAGE;
    const simulation: Record<string, string> = {};
    if (values.seed !== undefined) simulation.CAIRN_SIM_SEED = seedValue('--seed', values.seed, 0);
    if (values.seeds !== undefined) simulation.CAIRN_SIM_SEEDS = seedValue('--seeds', values.seeds, 1);
    if (values.sticky !== undefined) simulation.CAIRN_STICKY = stickyMode(values.sticky, '--sticky');
    const only = (values.only ?? []).flatMap((list) =>
      list
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
    return { harness, only, reporter: values.reporter, simulation };
  } catch (error) {
    return `${(error as Error).message}\n\n${USAGE}`;
  }
}

// The suite and the reporter next to this file: `.js` in the published build, `.ts` when the CLI
// runs from the sources through tsx (reporters are resolved without tsx's .js → .ts mapping).
const here = (path: string): string => {
  const js = new URL(path, import.meta.url);
  return existsSync(fileURLToPath(js)) ? js.href : new URL(path.replace(/\.js$/, '.ts'), import.meta.url).href;
};

/** The generated test entry: imports the harness, then registers the suite for it. */
function entrySource(harnessUrl: string): string {
  return `import { runConformance } from ${JSON.stringify(here('./suite/index.js'))};
const mod = await import(${JSON.stringify(harnessUrl)});
let harness = mod.default ?? mod.harness;
if (typeof harness === 'function') harness = await harness();
if (!harness || typeof harness.createStore !== 'function' || typeof harness.name !== 'string') {
  throw new TypeError(${JSON.stringify(`the harness file must default-export a ConformanceHarness ({ name, createStore, ... })`)});
}
runConformance(harness);
`;
}

/** The child's environment: ours, with `--only` passed on, and never a parent test runner's context. */
function childEnv(only: string[], simulation: Record<string, string> = {}): NodeJS.ProcessEnv {
  // Started from inside a `node --test` file, the variable would make the child skip its own files.
  const { NODE_TEST_CONTEXT: _parentRunner, ...env } = process.env;
  if (only.length > 0) env.CAIRN_CONFORMANCE_ONLY = only.join(',');
  return { ...env, ...simulation };
}

/** Runs the suite for one harness file in a child `node --test`; resolves with the counts. */
export async function runCli(argv: string[]): Promise<number> {
  const args = readArgs(argv);
  if (typeof args === 'string') {
    const help = args === USAGE && (argv.includes('--help') || argv.includes('-h'));
    (help ? console.log : console.error)(args);
    return help ? 0 : 2;
  }
  const harnessPath = resolve(process.cwd(), args.harness);
  if (!existsSync(harnessPath)) {
    console.error(`cairn-conformance: no such file ${harnessPath}`);
    return 2;
  }
  const dir = await mkdtemp(join(tmpdir(), 'cairn-conformance-'));
  try {
    const entry = join(dir, 'conformance.entry.mjs');
    const countsFile = join(dir, 'counts.json');
    await writeFile(entry, entrySource(pathToFileURL(harnessPath).href));
    // Keep export conditions the CLI itself was started with (e.g. --conditions=@cairn/source).
    const conditions = process.execArgv.filter((a) => a.startsWith('--conditions') || a.startsWith('-C'));
    const child = spawn(
      process.execPath,
      [
        '--import',
        import.meta.resolve('tsx'),
        ...conditions,
        '--test',
        '--test-concurrency=1',
        `--test-reporter=${args.reporter}`,
        '--test-reporter-destination=stdout',
        `--test-reporter=${here('./suite/reporters/outcome-count-reporter.js')}`,
        `--test-reporter-destination=${countsFile}`,
        entry,
      ],
      {
        stdio: 'inherit',
        env: childEnv(args.only, args.simulation),
      },
    );
    const exitCode = await new Promise<number>((done) => child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0))));
    let counts: OutcomeCounts | undefined;
    try {
      counts = JSON.parse(await readFile(countsFile, 'utf8')) as OutcomeCounts;
    } catch {
      // The child died before its reporter finished: report that as a failure below.
    }
    if (!counts) {
      console.error(`cairn-conformance: the test process ended (exit code ${exitCode}) without reporting results`);
      return Math.max(1, exitCode);
    }
    console.log(`cairn-conformance: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
    // A non-zero exit with no failed case (a crash outside any case) must not read as success.
    return counts.failed > 0 ? Math.min(counts.failed, 255) : exitCode === 0 ? 0 : 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// Run only as a program, not when imported (e.g. by tests).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await runCli(process.argv.slice(2));
}
