// The static tarball checks find what they claim to find.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkPackage, importsOf, packageOf } from '../package-checks.js';
import { publintProblems } from '../package-lint.js';
import { publicPackages } from '../workspace.js';

const work = mkdtempSync(join(tmpdir(), 'cairn-package-checks-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('imports are found in code, not in comments or generated code', () => {
  const source = [
    "import { a } from 'kysely';",
    "export * from './local.js';",
    "import type { B } from '@scope/pkg/sub';",
    "const m = await import('pg');",
    '/* import { c } from "in-a-comment"; */',
    "// import x from 'line-comment'",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text under test: a template literal that only looks like an import
    'const code = `import ${JSON.stringify(x)}`;',
  ].join('\n');
  assert.deepEqual(importsOf(source).sort(), ['./local.js', '@scope/pkg/sub', 'kysely', 'pg']);
  assert.equal(packageOf('@scope/pkg/sub'), '@scope/pkg');
  assert.equal(packageOf('node:fs'), undefined);
  assert.equal(packageOf('fs'), undefined);
  assert.equal(packageOf('./x.js'), undefined);
});

test('a tarball with a published source condition, a missing target and an undeclared import is refused', async () => {
  const core = publicPackages().find((p) => p.name === '@cairn/core');
  assert.ok(core);
  const dir = join(work, 'package');
  mkdirSync(join(dir, 'dist'), { recursive: true });
  const json = {
    ...core.json,
    exports: { '.': { '@cairn/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' },
    publishConfig: { access: 'public' },
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(json));
  writeFileSync(join(dir, 'dist', 'index.js'), "import { Kysely } from 'kysely';\nexport const x = 1;\n");
  writeFileSync(join(dir, 'README.md'), '# @cairn/core\n\n```sh\nnpm i @cairn/core\n```\n\n```ts\nx\n```\n');
  writeFileSync(join(dir, 'LICENSE'), 'MIT License\n');
  const problems = checkPackage({ pkg: core, tarball: '', dir, files: ['package.json', 'README.md', 'LICENSE', 'dist/index.js'] }, new Map());
  const text = problems.join('\n');
  assert.match(text, /condition "@cairn\/source" must not be published/);
  assert.match(text, /points consumers at TypeScript source \.\/src\/index\.ts/);
  // The missing target is publint's to find (FILE_DOES_NOT_EXIST), run on the same files.
  assert.match((await publintProblems('@cairn/core', dir)).join('\n'), /publint error FILE_DOES_NOT_EXIST: .*dist\/index\.d\.ts/);
  assert.match(text, /dist\/index\.js imports "kysely", which package\.json declares in neither/);
  assert.match(text, /published exports \(\.,.*\) differ from the workspace's/);
});
