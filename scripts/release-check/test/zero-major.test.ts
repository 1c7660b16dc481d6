// The 0.x correction of `pnpm changeset`: proven on a two-package workspace where the plain
// changesets 2.31 CLI releases 1.0.0 for a minor changeset, and ours releases 0.2.0 with the peer
// range rewritten.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { execOk } from '../exec.js';
import { ROOT } from '../workspace.js';
import { keepZeroMajorsMinor } from '../zero-major.mjs';

const require = createRequire(import.meta.url);
const semver = createRequire(require.resolve('@changesets/cli/package.json'))('semver');
const work = mkdtempSync(join(tmpdir(), 'cairn-zero-major-'));
after(() => rmSync(work, { recursive: true, force: true }));

const plan = (askedType: string) => ({
  changesets: [{ releases: [{ name: 'core', type: askedType }] }],
  releases: [
    { name: 'core', type: 'major', oldVersion: '0.1.0', newVersion: '1.0.0' },
    { name: 'adapter', type: 'major', oldVersion: '0.1.0', newVersion: '1.0.0' },
    { name: 'stable', type: 'major', oldVersion: '2.3.0', newVersion: '3.0.0' },
  ],
});

test('a major that only a peer minor asked for becomes a minor in 0.x', () => {
  const p = plan('minor');
  const demoted = keepZeroMajorsMinor(p, { fixed: [['core', 'adapter']] }, semver);
  assert.deepEqual(
    demoted.map((d: { name: string }) => d.name),
    ['core', 'adapter'],
  );
  assert.deepEqual(
    p.releases.map((r) => `${r.name}@${r.newVersion}:${r.type}`),
    ['core@0.2.0:minor', 'adapter@0.2.0:minor', 'stable@3.0.0:major'],
  );
});

test('a major a changeset asked for (for the package or its fixed group) is kept', () => {
  const p = plan('major');
  assert.deepEqual(keepZeroMajorsMinor(p, { fixed: [['core', 'adapter']] }, semver), []);
  assert.deepEqual(
    p.releases.map((r) => r.newVersion),
    ['1.0.0', '1.0.0', '3.0.0'],
  );
});

function fixture(dir: string): void {
  const write = (rel: string, content: unknown) => {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  };
  write('package.json', { name: 'fixture-root', private: true });
  write('pnpm-workspace.yaml', 'packages:\n  - packages/*\n');
  write('packages/core/package.json', { name: '@fx/core', version: '0.1.0' });
  write('packages/adapter/package.json', {
    name: '@fx/adapter',
    version: '0.1.0',
    peerDependencies: { '@fx/core': '^0.1.0' },
    devDependencies: { '@fx/core': 'workspace:*' },
  });
  // Our configuration, with the fixture's packages as the fixed group.
  const config = JSON.parse(readFileSync(join(ROOT, '.changeset', 'config.json'), 'utf8'));
  config.fixed = [['@fx/core', '@fx/adapter']];
  write('.changeset/config.json', config);
  write('.changeset/core-feature.md', '---\n"@fx/core": minor\n---\n\nA feature.\n');
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
}

test('plain changesets 2.31 would release 1.0.0; `pnpm changeset version` releases 0.2.0 and rewrites the peer range', async () => {
  const plain = join(work, 'plain');
  const ours = join(work, 'ours');
  fixture(plain);
  fixture(ours);
  const cli = join(ROOT, 'node_modules', '@changesets', 'cli', 'bin.js');
  await execOk('plain changeset version', process.execPath, [cli, 'version'], { cwd: plain });
  const plainAdapter = JSON.parse(readFileSync(join(plain, 'packages/adapter/package.json'), 'utf8'));
  assert.equal(plainAdapter.version, '1.0.0', 'the behaviour this correction exists for has changed: re-check zero-major.mjs');

  await execOk('our changeset version', process.execPath, [join(ROOT, 'scripts', 'release-check', 'changeset.mjs'), 'version'], { cwd: ours });
  const core = JSON.parse(readFileSync(join(ours, 'packages/core/package.json'), 'utf8'));
  const adapter = JSON.parse(readFileSync(join(ours, 'packages/adapter/package.json'), 'utf8'));
  assert.equal(core.version, '0.2.0');
  assert.equal(adapter.version, '0.2.0');
  assert.equal(adapter.peerDependencies['@fx/core'], '^0.2.0');
  assert.match(readFileSync(join(ours, 'packages/adapter/CHANGELOG.md'), 'utf8'), /## 0\.2\.0/);
});
