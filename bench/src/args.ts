import { parseArgs } from 'node:util';
import { BACKENDS, NOT_LANDED } from './backends/index.js';
import type { BackendName } from './backends/types.js';

/** Every scenario `--scenarios` can name, in the order the bench runs them. */
export const SCENARIO_NAMES = [
  'inline',
  'replay',
  'wake',
  'latency',
  'local',
  'idle',
  'cpu',
  'flow',
  'floor',
  'processes',
  'dispatch',
  'results',
  'fairness',
  'observability',
  'check',
  'codec',
  'streams',
  'requests',
  'serverless',
  'bulk',
  'tags',
] as const;

/** A scenario name (`--scenarios`). */
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

const BACKEND_NAMES: readonly BackendName[] = [...BACKENDS, ...NOT_LANDED].map((backend) => backend.name);

export const BENCH_USAGE = `Usage: pnpm bench [--smoke] [--only=<backend>,...] [--scenarios=<scenario>,...] [--workers=<n>,...] [--out=<path>] [--render[=<path>]]

  --smoke      tiny sizes, for CI: every scenario completes and the round-trip targets hold; no timing asserted
  --only       measure only these backends: ${BACKEND_NAMES.join(', ')}
  --scenarios  run only these scenarios: ${SCENARIO_NAMES.join(', ')}
  --workers    worker process counts of the processes and dispatch scenarios (default: 1,2,4,8 and 1,2,4; smoke: 1,2)
  --out        where to write the JSON results (default: bench/results/latest.json, smoke: smoke.tmp.json)
  --render     print the Markdown report of saved results again, measuring nothing (default: the --out file)
  --help       print this`;

/** The bench's command line, checked. */
export interface BenchArgs {
  /** `--help`: print the usage and measure nothing. */
  help: boolean;
  smoke: boolean;
  /** Backends to measure; `undefined`: all. Every name is a known backend. */
  only?: BackendName[];
  /** Scenarios to run; `undefined`: all. Every name is a known scenario. */
  scenarios?: ScenarioName[];
  /** `--workers`: worker process counts for the processes and dispatch scenarios; each an integer ≥ 1. */
  workers?: number[];
  out?: string;
  /** `--render`: `true` for the `--out` file, or the path given as `--render=<path>`. */
  render?: true | string;
}

/** A comma-separated list flag's names, each checked against `known`. */
function names<T extends string>(flag: string, what: string, lists: readonly string[] | undefined, known: readonly T[]): T[] | undefined {
  if (lists === undefined) return undefined;
  const out = lists.flatMap((list) => list.split(',').filter(Boolean));
  for (const name of out) {
    if (!(known as readonly string[]).includes(name)) throw new Error(`${flag}: unknown ${what} '${name}'; known: ${known.join(', ')}`);
  }
  return out as T[];
}

/**
 * Parses the bench's flags with `node:util` `parseArgs` in strict mode. Throws an `Error` whose
 * message says what is wrong for an unknown or misspelled flag, a missing value, a positional
 * argument, or an unknown backend or scenario name: a typo must not measure the wrong thing.
 */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  // `--render` takes an optional value, which parseArgs has no notion of: a bare `--render` is
  // passed on as `--render=` (an empty path: the --out file).
  const args = argv.map((arg) => (arg === '--render' ? '--render=' : arg));
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      smoke: { type: 'boolean', default: false },
      only: { type: 'string', multiple: true },
      scenarios: { type: 'string', multiple: true },
      workers: { type: 'string', multiple: true },
      out: { type: 'string' },
      render: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const only = names('--only', 'backend', values.only, BACKEND_NAMES);
  const scenarios = names('--scenarios', 'scenario', values.scenarios, SCENARIO_NAMES);
  const workers = values.workers
    ?.flatMap((list) => list.split(',').filter(Boolean))
    .map((count) => {
      const n = Number(count);
      if (!Number.isInteger(n) || n < 1) throw new Error(`--workers: '${count}' is not a worker count (an integer ≥ 1)`);
      return n;
    });
  return {
    help: values.help,
    smoke: values.smoke,
    ...(only === undefined ? {} : { only }),
    ...(scenarios === undefined ? {} : { scenarios }),
    ...(workers === undefined || workers.length === 0 ? {} : { workers }),
    ...(values.out === undefined ? {} : { out: values.out }),
    ...(values.render === undefined ? {} : { render: values.render === '' ? true : values.render }),
  };
}
