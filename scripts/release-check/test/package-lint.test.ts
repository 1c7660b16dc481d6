// publint and attw run on what is published: the real @cairn/core tarball passes both (attw with the
// esm-only profile), and a tarball whose types entry is missing fails attw.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { attwProblems, publintProblems } from '../package-lint.js';
import { packDir } from '../pack.js';
import { ROOT, publicPackages } from '../workspace.js';
import { breakTarball } from './broken-package.js';

const work = mkdtempSync(join(tmpdir(), 'cairn-package-lint-'));
after(() => rmSync(work, { recursive: true, force: true }));
let core: { tarball: string; dir: string };

before(async () => {
  const pkg = publicPackages().find((p) => p.name === '@cairn/core');
  assert.ok(pkg);
  assert.ok(existsSync(join(ROOT, pkg.dir, 'dist', 'index.js')), `${pkg.dir}/dist is missing: run pnpm build first`);
  core = await packDir(join(ROOT, pkg.dir), pkg.name, join(work, 'packs'));
});

test('the @cairn/core tarball passes publint (every level) and attw', async () => {
  assert.deepEqual(await publintProblems('@cairn/core', core.dir), []);
  assert.deepEqual(await attwProblems('@cairn/core', core.tarball), []);
});

test('a types entry that is not in the tarball fails attw', async () => {
  const broken = await breakTarball(work, core.tarball, (json) => {
    (json.exports as Record<string, Record<string, string>>)['./testing'] = { types: './dist/testing/missing.d.ts', default: './dist/testing/index.js' };
  });
  const problems = await attwProblems('@cairn/core', broken);
  assert.equal(problems.length, 1, readdirSync(work).join());
  assert.match(problems[0] as string, /@cairn\/core\/testing/);
});
