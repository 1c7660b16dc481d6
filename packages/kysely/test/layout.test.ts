import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// The package's layout rules (docs/backends/kysely.md, "Layout"), read from the sources themselves.
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );

// Imports that exist at run time: `import type` and `export type` vanish when compiled, so a cycle
// through them alone loads nothing in a circle.
const VALUE_IMPORT = /^(?:import|export)\s+(?!type\s)[^;]*?from\s+'(\.[^']+)'/gms;

function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(VALUE_IMPORT)].map((m) => resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts')));
}

/** Every import cycle, each as the files it goes through (relative to src). */
function cycles(): string[][] {
  const graph = new Map(sourceFiles(SRC).map((file) => [file, valueImports(file)]));
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      found.push(path.slice(path.indexOf(file)).map((f) => relative(SRC, f)));
      return;
    }
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

// The folders that hold one dialect's code each, and dialect/ (the interface, detection).
const DIALECT_FOLDERS = ['dialect', 'postgres', 'mysql', 'sqlite'];
// A choice made by dialect name: a comparison, a `case`, or a table keyed by the names (the column
// types were one, in schema/, until issue 20's last piece).
const NAME_BRANCH = /(?:dialect|\.name)\s*[!=]==\s*'(?:postgres|mysql|sqlite)'|\bcase\s+'(?:postgres|mysql|sqlite)'|^\s*(?:postgres|mysql|sqlite)\s*:/;

describe('packages/kysely layout', () => {
  it('has no import cycle among its sources', () => {
    assert.deepEqual(cycles(), []);
  });

  it('branches on a dialect name only inside the dialect folders', () => {
    const branches = sourceFiles(SRC)
      .map((file) => relative(SRC, file))
      .filter((file) => !DIALECT_FOLDERS.includes(file.split('/')[0] as string))
      .flatMap((file) =>
        readFileSync(join(SRC, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (NAME_BRANCH.test(line) ? [`${file}:${i + 1}`] : [])),
      );
    assert.deepEqual(branches, []);
  });
});
