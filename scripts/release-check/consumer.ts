// The consumer test: a fresh project outside the workspace installs the packed tarballs with npm
// (no workspace links), type-checks a small TypeScript program against them and runs it to the end.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exec, seconds, tail, type ExecResult } from './exec.js';
import { npmCacheDir } from './cache.js';
import { nodeEnv, type NodeInstall } from './node-versions.js';
import { semver } from './semver.js';
import { preparePrebuild, rememberPrebuild } from './sqlite-prebuilds.js';
import { ROOT, readJson, type PackageJson } from './workspace.js';

const FIXTURES = fileURLToPath(new URL('./consumer/', import.meta.url));

export interface Scenario {
  /** `sqlite`, `redis`, `clients-oldest`: names the project directory and the reports. */
  name: string;
  /** The program, consumer/<fixture>.ts (default: the name). */
  fixture?: string;
  /** The workspace packages it installs from tarballs. */
  packages: string[];
  /** What it installs from the registry, name → exact version. */
  registry: Record<string, string>;
  /** Extra environment for the program (REDIS_URL). */
  env?: Record<string, string>;
  /** Checks what npm installed (the client versions of the matrix): lines to print, problems to fail on. */
  checkInstalled?: (projectDir: string) => { lines: string[]; problems: string[] };
}

const devDep = (dir: string, name: string): string => {
  const version = readJson<PackageJson>(join(ROOT, dir, 'package.json')).devDependencies?.[name];
  if (!version) throw new Error(`${dir}/package.json has no devDependency ${name}`);
  return version;
};

/** The versions the workspace tests with, so the consumer gets the same (and cache hits). */
export const versions = {
  typescript: () => devDep('.', 'typescript'),
  typesNode: () => devDep('.', '@types/node'),
  betterSqlite3: () => devDep('packages/kysely', 'better-sqlite3'),
  ioredis: () => devDep('packages/redis', 'ioredis'),
};

export const sqliteScenario = (): Scenario => ({
  name: 'sqlite',
  packages: ['@cairn/core', '@cairn/kysely', '@cairn/cli'],
  registry: { 'better-sqlite3': versions.betterSqlite3() },
});

export const redisScenario = (redisUrl: string): Scenario => ({
  name: 'redis',
  packages: ['@cairn/core', '@cairn/redis'],
  registry: { ioredis: versions.ioredis() },
  env: { REDIS_URL: redisUrl },
});

/** A failed consumer check: which scenario, which Node, which step, and why. */
export class ConsumerCheckError extends Error {
  constructor(
    readonly scenario: string,
    readonly node: string,
    readonly step: 'npm install' | 'installed packages' | 'tsc' | 'run',
    readonly reasons: string[],
    output: string,
  ) {
    super(
      `consumer test "${scenario}" on Node ${node} failed at ${step}:\n` +
        reasons.map((r) => `  ✘ ${r}`).join('\n') +
        (output ? `\n  output:\n${tail(output, 30)}` : ''),
    );
    this.name = 'ConsumerCheckError';
  }
}

/** The lines of a failed command that say what went wrong. */
export function reasonsIn(output: string): string[] {
  const interesting =
    /error TS\d+|ERR_[A-Z_]+|Cannot find (module|package)|does not provide an export|SyntaxError|AssertionError|TypeError|ReferenceError|ERESOLVE|npm error|Error:/;
  // The statement that threw and the error's own fields repeat what the message says.
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => interesting.test(l) && !/^(throw |code:|at )/.test(l));
  return [...new Set(lines)].slice(0, 8);
}

export interface ConsumerResult {
  scenario: string;
  node: string;
  /** Step → milliseconds. */
  steps: Record<string, number>;
  /** Whether better-sqlite3 came from a cached binary (sqlite) or was compiled. */
  nativeCached?: boolean;
  warnings: string[];
  output: string;
}

/**
 * The type errors of a tsc run, split into ours (the program, any @cairn package) and those inside a
 * third-party package's own .d.ts files (by package), which a project that checks libraries sees
 * with or without Cairn: some client versions ship typings that fail the current TypeScript.
 */
export function typeErrorsOf(output: string): { ours: string[]; theirs: Map<string, string[]> } {
  const ours: string[] = [];
  const theirs = new Map<string, string[]>();
  for (const line of output.split('\n').map((l) => l.trim())) {
    if (!/error TS\d+/.test(line)) continue;
    const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)\/.*\.d\.[cm]?ts\(/.exec(line)?.[1];
    if (pkg && !pkg.startsWith('@cairn/')) theirs.set(pkg, [...(theirs.get(pkg) ?? []), line]);
    else ours.push(line);
  }
  return { ours, theirs };
}

/** `spec` itself when it is an exact version, else the newest version the registry has in that range. */
async function newestVersion(name: string, spec: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (semver.valid(spec)) return spec;
  const result = await exec('npm', ['view', `${name}@${spec}`, 'version', '--json', '--prefer-offline'], { env });
  if (result.code !== 0) throw new Error(`npm view ${name}@${spec} failed:\n${tail(result.output, 10)}`);
  const found = JSON.parse(result.output.slice(result.output.search(/[["]/))) as string | string[];
  const versions = Array.isArray(found) ? found : [found];
  const newest = versions.at(-1);
  if (!newest) throw new Error(`no ${name} version in "${spec}"`);
  return newest;
}

/** Every copy of `@scope/name` under node_modules (a second copy of @cairn/core breaks instanceof and registries). */
function copiesOf(projectDir: string, name: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    const candidate = join(dir, name);
    if (existsSync(join(candidate, 'package.json'))) found.push(candidate);
    if (depth > 6) return;
    for (const entry of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
      if (!entry.isDirectory()) continue;
      const child = join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        for (const scoped of readdirSync(child, { withFileTypes: true })) {
          if (scoped.isDirectory()) walk(join(child, scoped.name, 'node_modules'), depth + 1);
        }
      } else walk(join(child, 'node_modules'), depth + 1);
    }
  };
  walk(join(projectDir, 'node_modules'), 0);
  return found;
}

/**
 * Runs one scenario on one Node in `projectDir` (created fresh). `tarballs` maps package names to
 * packed .tgz files. Throws ConsumerCheckError on the first failing step.
 */
export async function runConsumer(
  scenario: Scenario,
  node: NodeInstall,
  tarballs: ReadonlyMap<string, string>,
  projectDir: string,
  options: { libCheck?: boolean } = {},
): Promise<ConsumerResult> {
  const libCheck = options.libCheck ?? true;
  rmSync(projectDir, { recursive: true, force: true });
  mkdirSync(projectDir, { recursive: true });
  const steps: Record<string, number> = {};
  const fail = (step: ConsumerCheckError['step'], result: Pick<ExecResult, 'output'>, reasons?: string[]): never => {
    const found = reasons ?? reasonsIn(result.output);
    throw new ConsumerCheckError(scenario.name, node.version, step, found.length > 0 ? found : ['(see the output)'], result.output);
  };

  const env = { ...nodeEnv(node), npm_config_cache: npmCacheDir(), npm_config_update_notifier: 'false' };
  const registry = { ...scenario.registry };
  // better-sqlite3's binary cache is kept per exact version: a range is resolved first.
  const sqliteSpec = registry['better-sqlite3'];
  const sqliteVersion = sqliteSpec ? await newestVersion('better-sqlite3', sqliteSpec, env) : undefined;
  if (sqliteVersion) registry['better-sqlite3'] = sqliteVersion;

  const dependencies: Record<string, string> = {};
  for (const name of scenario.packages) {
    const tarball = tarballs.get(name);
    if (!tarball) throw new Error(`no tarball for ${name}`);
    dependencies[name] = `file:${tarball}`;
  }
  Object.assign(dependencies, registry);
  writeFileSync(
    join(projectDir, 'package.json'),
    JSON.stringify(
      {
        name: `cairn-consumer-${scenario.name}`,
        private: true,
        type: 'module',
        dependencies,
        devDependencies: { typescript: versions.typescript(), '@types/node': versions.typesNode() },
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(projectDir, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2023',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          // Our .d.ts files are checked as a strict consumer sees them (once per scenario: the
          // result does not depend on the Node version, and it costs seconds).
          skipLibCheck: !libCheck,
          types: ['node'],
          outDir: 'out',
          // Emitted even when a dependency's own .d.ts has errors; `typeErrorsOf` decides.
          noEmitOnError: false,
        },
        include: ['main.ts', 'workflow.ts'],
      },
      null,
      2,
    ),
  );
  copyFileSync(join(FIXTURES, `${scenario.fixture ?? scenario.name}.ts`), join(projectDir, 'main.ts'));
  copyFileSync(join(FIXTURES, 'workflow.ts'), join(projectDir, 'workflow.ts'));

  const nativeCached = sqliteVersion ? await preparePrebuild(projectDir, sqliteVersion, node) : undefined;

  // 1. npm install, as a user would (registry packages through the persistent cache).
  const install = await exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: projectDir, env, timeoutMs: 600_000 });
  steps['npm install'] = install.ms;
  if (install.code !== 0) fail('npm install', install);
  if (sqliteVersion && !nativeCached) await rememberPrebuild(projectDir, sqliteVersion, node);
  // npm 11 lists packages with install scripts it has not been told to allow (it runs them anyway).
  const warnings = install.output.split('\n').filter((l) => /^npm warn/i.test(l) && !/Unknown (env|project) config|install-scripts/.test(l));

  // 2. The @cairn packages are the tarballs' (one copy each), not something from a registry.
  const problems: string[] = [];
  for (const name of scenario.packages) {
    const copies = copiesOf(projectDir, name);
    if (copies.length !== 1) problems.push(`${copies.length} copies of ${name} installed: ${copies.join(', ')}`);
  }
  const installed = scenario.checkInstalled?.(projectDir);
  if (installed) problems.push(...installed.problems);
  if (problems.length > 0) fail('installed packages', { output: '' }, problems);

  // 3. Type-check (and emit) the program against the installed .d.ts files.
  const tsc = await exec(node.bin, [join(projectDir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: projectDir, env });
  steps[libCheck ? 'tsc' : 'tsc (skipLibCheck)'] = tsc.ms;
  const typeErrors = typeErrorsOf(tsc.output);
  if (tsc.code !== 0 && (typeErrors.ours.length > 0 || typeErrors.theirs.size === 0)) fail('tsc', tsc);
  for (const [pkg, lines] of typeErrors.theirs) {
    warnings.push(`${pkg}'s own .d.ts files fail a check without skipLibCheck (${lines.length} errors, not in Cairn's types), e.g. ${lines[0]}`);
  }

  // 4. Run it: a workflow to completion.
  const run = await exec(node.bin, ['out/main.js'], { cwd: projectDir, env: { ...env, ...scenario.env }, timeoutMs: 120_000 });
  steps['run'] = run.ms;
  if (run.code !== 0) fail('run', run);

  const output = [...(installed?.lines.map((l) => `installed ${l}`) ?? []), run.output.trim()].join('\n');
  return { scenario: scenario.name, node: node.version, steps, nativeCached, warnings, output };
}

export const describeResult = (r: ConsumerResult): string =>
  `${r.scenario} on Node ${r.node}: ` +
  Object.entries(r.steps)
    .map(([step, ms]) => `${step} ${seconds(ms)}`)
    .join(', ') +
  (r.nativeCached === undefined ? '' : r.nativeCached ? ' (better-sqlite3 from the binary cache)' : ' (better-sqlite3 compiled; now cached)');
