// The consumer test has teeth: a package broken the ways packages really break (a file left out of
// "files", an export removed, a dependency dropped) fails it, at the right step, with a message
// that names the problem. Uses the tarballs of the surrounding `pnpm release:check`
// (CAIRN_RELEASE_CHECK_PACKS), or packs @cairn/core and @cairn/kysely itself (after `pnpm build`).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ConsumerCheckError, runConsumer, sqliteScenario } from '../consumer.js';
import { execOk } from '../exec.js';
import { ensureNode, type NodeInstall } from '../node-versions.js';
import { checkPackage } from '../package-checks.js';
import { packDir, unpack } from '../pack.js';
import { ROOT, publicPackages } from '../workspace.js';
import { breakTarball } from './broken-package.js';

const work = mkdtempSync(join(tmpdir(), 'cairn-release-selftest-'));
const good = new Map<string, string>();
let node: NodeInstall;

before(async () => {
  node = await ensureNode(Number(process.versions.node.split('.')[0]));
  const packs = process.env['CAIRN_RELEASE_CHECK_PACKS'];
  for (const name of ['@cairn/core', '@cairn/kysely', '@cairn/cli']) {
    const file = `${name.replace(/^@/, '').replace('/', '-')}-`;
    const existing = packs && existsSync(packs) ? readdirSync(packs).find((f) => f.startsWith(file) && f.endsWith('.tgz')) : undefined;
    if (existing && packs) {
      good.set(name, join(packs, existing));
    } else {
      const pkg = publicPackages().find((p) => p.name === name);
      assert.ok(pkg, name);
      assert.ok(existsSync(join(ROOT, pkg.dir, 'dist', 'index.js')), `${pkg.dir}/dist is missing: run pnpm build first`);
      good.set(name, (await packDir(join(ROOT, pkg.dir), name, join(work, 'packs'))).tarball);
    }
  }
});
after(() => rmSync(work, { recursive: true, force: true }));

/** Runs the SQLite consumer test with `replace` swapped in; returns its error (or fails if it passed). */
async function consumerFailure(label: string, replace: Record<string, string>): Promise<ConsumerCheckError> {
  const tarballs = new Map([...good, ...Object.entries(replace)]);
  try {
    await runConsumer(sqliteScenario(), node, tarballs, join(work, label), { libCheck: false });
  } catch (error) {
    if (error instanceof ConsumerCheckError) {
      console.log(
        `  ${label}: the consumer test failed as it should:\n${error.message
          .split('\n')
          .slice(0, 6)
          .map((l) => `    ${l}`)
          .join('\n')}`,
      );
      return error;
    }
    throw error;
  }
  assert.fail(`the consumer test passed with a broken package (${label})`);
}

test('the good tarballs pass (the control)', { skip: process.env['CAIRN_RELEASE_CHECK_PACKS'] ? 'release:check just ran them' : false }, async () => {
  const result = await runConsumer(sqliteScenario(), node, good, join(work, 'control'), { libCheck: false });
  assert.match(result.output, /consumer sqlite: workflow completed/);
});

test('a file left out of "files" (dist/schema of @cairn/kysely) fails the consumer test', async () => {
  const broken = await breakTarball(work, good.get('@cairn/kysely') as string, (json) => {
    json.files = ['dist/*.js', 'dist/*.d.ts', 'README.md', 'LICENSE'];
  });
  const error = await consumerFailure('missing-file', { '@cairn/kysely': broken });
  assert.ok(['tsc', 'run'].includes(error.step), error.message);
  assert.match(error.message, /Cannot find module '[^']*@cairn\/kysely\/dist\/[a-z-]+\/[a-z-]+\.js'|ERR_MODULE_NOT_FOUND/);
});

test('an export removed (@cairn/core/testing) fails the consumer test at tsc', async () => {
  const broken = await breakTarball(work, good.get('@cairn/core') as string, (json) => {
    delete (json.exports as Record<string, unknown>)['./testing'];
  });
  const error = await consumerFailure('missing-export', { '@cairn/core': broken });
  assert.equal(error.step, 'tsc', error.message);
  assert.match(error.message, /error TS2307: Cannot find module '@cairn\/core\/testing'/);
});

test('a dependency dropped (the kysely peer of @cairn/kysely) fails the consumer test and the package check', async () => {
  const broken = await breakTarball(work, good.get('@cairn/kysely') as string, (json) => {
    delete json.peerDependencies?.['kysely'];
  });
  const error = await consumerFailure('missing-dependency', { '@cairn/kysely': broken });
  assert.ok(['tsc', 'run'].includes(error.step), error.message);
  assert.match(error.message, /Cannot find (package|module) 'kysely'/);

  // The static check names it too, without installing anything.
  const kysely = publicPackages().find((p) => p.name === '@cairn/kysely');
  assert.ok(kysely);
  const unpacked = join(work, 'missing-dependency-unpacked');
  mkdirSync(unpacked, { recursive: true });
  await unpack(broken, unpacked);
  const files = (await execOk('list', 'tar', ['-tzf', broken])).output
    .trim()
    .split('\n')
    .map((f) => f.replace(/^package\//, ''));
  const problems = checkPackage({ pkg: kysely, tarball: broken, dir: join(unpacked, 'package'), files }, new Map([['@cairn/core', kysely.json.version]]));
  assert.ok(
    problems.some((p) => /imports "kysely", which package.json declares in neither dependencies nor peerDependencies/.test(p)),
    problems.join('\n'),
  );
});
