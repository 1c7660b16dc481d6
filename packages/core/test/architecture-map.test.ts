// ARCHITECTURE.md is the newcomer's map. A map that names files which moved, or a dependency table
// that the package manifests contradict, misleads more than no map: this test reads both claims from
// the document and checks them against the repository.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const MAP = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');

it('every path ARCHITECTURE.md names exists', () => {
  const named = new Set<string>();
  // Code spans that look like repository paths, and the targets of relative links.
  for (const m of MAP.matchAll(/`([\w.@-]+\/[\w./@-]*)`/g)) if (!(m[1] as string).startsWith('@cairn/')) named.add(m[1] as string);
  for (const m of MAP.matchAll(/\]\(([\w./-]+)\)/g)) named.add(m[1] as string);
  assert.ok(named.size > 30, `only ${named.size} paths found: the pattern no longer reads the map`);
  const missing = [...named].filter((path) => !existsSync(join(ROOT, path)));
  assert.deepEqual(missing, []);
});

it("the map's package table is each package's workspace dependencies", () => {
  const table = new Map<string, string>();
  for (const m of MAP.matchAll(/^\| `(@cairn\/[\w-]+)` \| `(packages\/[\w-]+)` \| (.*) \|$/gm)) {
    const deps = [...(m[3] as string).matchAll(/`(@cairn\/[\w-]+)`/g)].map((d) => d[1]).sort();
    table.set(m[2] as string, `${m[1]}: ${deps.join(' ')}`);
  }
  const actual = new Map<string, string>();
  for (const dir of readdirSync(join(ROOT, 'packages'))) {
    const manifest = join(ROOT, 'packages', dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; private?: boolean; dependencies?: object; peerDependencies?: object };
    if (pkg.private === true) continue;
    const deps = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies })
      .filter((name) => name.startsWith('@cairn/'))
      .sort();
    actual.set(`packages/${dir}`, `${pkg.name}: ${deps.join(' ')}`);
  }
  assert.deepEqual(Object.fromEntries([...table].sort()), Object.fromEntries([...actual].sort()));
});
