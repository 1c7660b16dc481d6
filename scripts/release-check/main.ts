// `pnpm release:check`: what the next release would publish, checked the way a user meets it.
//
//   1. build                 pnpm build (turbo; cached when nothing changed)
//   2. release config        the fixed group is exactly the public packages
//   3. changeset status      pending changesets and the bumps they make
//   4. version dry run       `changeset version` in a temporary copy: versions, ranges, CHANGELOG entries
//   5. pack + package checks `pnpm pack` of every public package; metadata, files, exports, deps;
//                            publint and attw on each tarball
//   6. consumer tests        fresh npm projects install the tarballs and run a workflow, per Node
//   7. client version matrix one project per bound (oldest, newest) of every driver's peer range,
//                            each store and queue running a workflow on a real server (newest Node)
//   8. self-test             broken tarballs must fail the consumer test (test/*.test.ts)
//
// Options: --skip-build, --nodes 22,24, --no-selftest, --no-matrix, --matrix-only (skip the per-Node
// consumer tests), --keep (keep the temp dir). Exit code 1 if
// any phase failed; every phase that can still run does, and the timings are printed at the end.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cacheRoot } from './cache.js';
import { installedClients, matrixScenario, type Bound } from './client-matrix.js';
import { ConsumerCheckError, describeResult, redisScenario, runConsumer, sqliteScenario, type Scenario } from './consumer.js';
import { exec, execOk, tail } from './exec.js';
import { ensureNode } from './node-versions.js';
import { checkPackage } from './package-checks.js';
import { ATTW_PROFILE, attwProblems, publintProblems } from './package-lint.js';
import { packAll, type Packed } from './pack.js';
import { startServer, type ServerForCheck } from './servers.js';
import { Timings } from './timings.js';
import { versionDryRun } from './version-dry-run.js';
import { ROOT, publicPackages, readJson, workspacePackages } from './workspace.js';

const { values: args } = parseArgs({
  options: {
    'skip-build': { type: 'boolean', default: false },
    nodes: { type: 'string', default: '22,24' },
    'no-selftest': { type: 'boolean', default: false },
    'no-matrix': { type: 'boolean', default: false },
    'matrix-only': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});

const timings = new Timings();
const failures: string[] = [];
const work = mkdtempSync(join(tmpdir(), 'cairn-release-check-'));
console.log(`release:check in ${work} (caches in ${cacheRoot()}), Node ${process.version}`);

/** Runs consumer scenarios one after the other; returns one line per failed scenario. */
async function runScenarios(
  scenarios: readonly Scenario[],
  node: Awaited<ReturnType<typeof ensureNode>>,
  tarballs: ReadonlyMap<string, string>,
  options: { libCheck: boolean; suffix: string },
): Promise<string[]> {
  const errors: string[] = [];
  // One after the other: on 2 cores, side by side was no faster (tsc is CPU-bound).
  for (const scenario of scenarios) {
    try {
      const result = await runConsumer(scenario, node, tarballs, join(work, `consumer-${scenario.name}-${options.suffix}`), { libCheck: options.libCheck });
      console.log(`✔ ${describeResult(result)}\n  ${result.output.split('\n').join('\n  ')}`);
      for (const w of result.warnings) console.log(`  ${w}`);
    } catch (error) {
      if (!(error instanceof ConsumerCheckError)) throw error;
      console.error(`✘ ${error.message}`);
      errors.push(`${scenario.name}: failed at ${error.step}`);
    }
  }
  return errors;
}

/** Runs a phase; a failure is recorded and printed, and the run goes on. */
async function phase<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await timings.phase(name, fn);
  } catch (error) {
    failures.push(name);
    console.error(`\n✘ ${name}:\n${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

const servers: ServerForCheck[] = [];
try {
  if (!args['skip-build']) {
    await phase('build (pnpm build)', async () => {
      await execOk('pnpm build', 'pnpm', ['build', '--output-logs=errors-only'], { cwd: ROOT, stream: true });
    });
  }

  await phase('release config (.changeset/config.json)', async () => {
    const config = readJson<{ fixed: string[][]; privatePackages?: { version?: boolean; tag?: boolean } }>(join(ROOT, '.changeset', 'config.json'));
    const publicNames = publicPackages()
      .map((p) => p.name)
      .sort();
    const fixed = [...(config.fixed[0] ?? [])].sort();
    const problems: string[] = [];
    if (config.fixed.length !== 1 || fixed.join() !== publicNames.join()) {
      problems.push(`the fixed group must list exactly the public packages (${publicNames.join(', ')}), it lists ${JSON.stringify(config.fixed)}`);
    }
    for (const p of workspacePackages()) {
      if (p.json.private === true && fixed.includes(p.name)) problems.push(`private ${p.name} is in the fixed group`);
    }
    if (config.privatePackages?.version !== false || config.privatePackages?.tag !== false)
      problems.push('privatePackages must be { version: false, tag: false }');
    if (problems.length > 0) throw new Error(problems.join('\n'));
    console.log(`fixed group: ${fixed.join(', ')}`);
    console.log(
      `private (never versioned): ${workspacePackages()
        .filter((p) => p.json.private === true)
        .map((p) => p.name)
        .join(', ')}`,
    );
  });

  await phase('changeset status', async () => {
    await execOk('changeset status', process.execPath, [join(ROOT, 'scripts', 'release-check', 'changeset.mjs'), 'status', '--verbose'], {
      cwd: ROOT,
      stream: true,
    });
  });

  await phase('changeset version (dry run in a temporary copy)', async () => {
    const dir = join(work, 'version-dry-run');
    mkdirSync(dir);
    const report = await versionDryRun(dir);
    console.log(report.lines.join('\n'));
    if (report.problems.length > 0) throw new Error(report.problems.map((p) => `  ✘ ${p}`).join('\n'));
  });

  const packed = await phase('pnpm pack', async () => {
    const all = await packAll(publicPackages(), join(work, 'packs'));
    for (const p of all) {
      const size = readFileSync(p.tarball).length;
      console.log(`${p.pkg.name}@${p.pkg.json.version}: ${p.files.length} files, ${(size / 1024).toFixed(0)} KiB packed`);
    }
    return all;
  });

  if (packed) {
    await phase('package checks (the tarballs as published)', async () => {
      const released = new Map(packed.map((p) => [p.pkg.name, p.pkg.json.version]));
      const problems = packed.flatMap((p) => checkPackage(p, released));
      if (problems.length > 0) throw new Error(problems.map((p) => `  ✘ ${p}`).join('\n'));
      console.log('metadata, README, LICENSE, no tests, exports targets shipped, no source condition, dependencies declared: ok');
    });
  }

  if (packed) {
    await phase('publint and attw (the tarballs as published)', async () => {
      const problems: string[] = [];
      // One package at a time: attw loads a TypeScript program per entry point (CPU-bound).
      for (const p of packed) problems.push(...(await publintProblems(p.pkg.name, p.dir)), ...(await attwProblems(p.pkg.name, p.tarball)));
      if (problems.length > 0) throw new Error(problems.map((p) => `  ✘ ${p}`).join('\n'));
      console.log(`publint (every level) and attw (--profile ${ATTW_PROFILE}): ${packed.length} packages clean`);
    });
  }

  if (packed) {
    const tarballs = new Map(packed.map((p: Packed) => [p.pkg.name, p.tarball]));
    const majors = args.nodes.split(',').map((n) => Number(n.trim()));
    const matrix = !args['no-matrix'];
    await phase(`servers for the consumer tests (${matrix ? 'PostgreSQL, MariaDB, MongoDB, Redis' : 'Redis'})`, async () => {
      // One at a time: each start is CPU-bound on 2 cores, and a failure names its server.
      const missing: string[] = [];
      for (const name of matrix ? (['postgres', 'mysql', 'mongodb', 'redis'] as const) : (['redis'] as const)) {
        try {
          const server = await startServer(name);
          servers.push(server);
          console.log(`${name}: ${server.detail}`);
        } catch (error) {
          // The others still start: the consumer tests that need only them still run.
          missing.push(error instanceof Error ? error.message : String(error));
        }
      }
      if (missing.length > 0) throw new Error(missing.join('\n'));
    });
    const redis = servers.find((s) => s.name === 'redis');
    for (const [i, major] of args['matrix-only'] ? [] : majors.entries()) {
      await phase(`consumer tests on Node ${major}`, async () => {
        const node = await ensureNode(major);
        console.log(`Node ${node.version} (${node.dir}), npm_config_nodedir set to it`);
        const scenarios = [sqliteScenario(), ...(redis ? [redisScenario(redis.url)] : [])];
        const errors = await runScenarios(scenarios, node, tarballs, { libCheck: i === 0, suffix: `node${major}` });
        if (!redis) errors.push('redis: no Redis server (see above)');
        if (errors.length > 0) throw new Error(errors.join('\n'));
      });
    }
    if (matrix) {
      const newest = Math.max(...majors);
      await phase(`client version matrix (oldest and newest of each peer range, Node ${newest})`, async () => {
        const url = (name: ServerForCheck['name']) => {
          const server = servers.find((s) => s.name === name);
          if (!server) throw new Error(`no ${name} server (see above)`);
          return server.url;
        };
        const urls = { POSTGRES_URL: url('postgres'), MYSQL_URL: url('mysql'), REDIS_URL: url('redis'), MONGODB_URL: url('mongodb') };
        const node = await ensureNode(newest);
        const scenarios = (['oldest', 'newest'] as Bound[]).map((bound) => ({
          ...matrixScenario(bound, urls),
          checkInstalled: (dir: string) => installedClients(dir, bound),
        }));
        // The library check here is the point: our .d.ts files against each bound's typings.
        const errors = await runScenarios(scenarios, node, tarballs, { libCheck: true, suffix: `node${newest}` });
        if (errors.length > 0) throw new Error(errors.join('\n'));
      });
    }
    if (!args['no-selftest']) {
      await phase('self-test: broken packages fail the consumer test', async () => {
        const tests = [
          'scripts/release-check/test/client-matrix.test.ts',
          'scripts/release-check/test/consumer-check.test.ts',
          'scripts/release-check/test/zero-major.test.ts',
          'scripts/release-check/test/package-checks.test.ts',
          'scripts/release-check/test/package-lint.test.ts',
        ];
        const result = await exec(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...tests], {
          cwd: ROOT,
          env: { ...process.env, CAIRN_RELEASE_CHECK_PACKS: join(work, 'packs') },
          stream: true,
        });
        if (result.code !== 0) throw new Error(`the self-test failed (exit ${result.code})\n${tail(result.output, 20)}`);
      });
    }
  }
} finally {
  for (const server of servers) await server.stop().catch((error: unknown) => console.error(`stopping ${server.name}: ${String(error)}`));
  if (!args.keep) rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
  console.log(`\n=== [release:check] timings\n${timings.summary()}`);
  if (failures.length > 0) {
    console.log(`=== [release:check] FAILED: ${failures.join('; ')}`);
    process.exitCode = 1;
  } else {
    console.log('=== [release:check] OK');
  }
}
