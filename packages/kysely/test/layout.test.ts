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
// Every import, types included: a type only one dialect uses is that dialect's too.
const ANY_IMPORT = /^(?:import|export)\s+[^;]*?from\s+'(\.[^']+)'/gms;

function importsOf(file: string, pattern: RegExp): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(pattern)].map((m) => resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts')));
}

const valueImports = (file: string): string[] => importsOf(file, VALUE_IMPORT);

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
// The folders of one dialect each.
const ONE_DIALECT = ['postgres', 'mysql', 'sqlite'];

/**
 * Who uses each file outside the dialect folders: the dialect folders that import it, directly or
 * through other shared files, and `shared` when code every dialect runs does (a file nothing in
 * src imports is an entry point: shared). A file only one dialect uses belongs in that dialect's
 * folder.
 */
function usersOfSharedFiles(): Map<string, Set<string>> {
  const files = sourceFiles(SRC).map((file) => relative(SRC, file));
  const importers = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const file of files) for (const target of importsOf(join(SRC, file), ANY_IMPORT)) importers.get(relative(SRC, target))?.push(file);
  const folderOf = (file: string) => (file.includes('/') ? (file.split('/')[0] as string) : '');
  const users = new Map<string, Set<string>>();
  const usersOf = (file: string, seen: Set<string>): Set<string> => {
    const known = users.get(file);
    if (known !== undefined) return known;
    const found = new Set<string>();
    const by = importers.get(file) ?? [];
    if (by.length === 0) found.add('shared');
    for (const importer of by) {
      if (ONE_DIALECT.includes(folderOf(importer))) found.add(folderOf(importer));
      // A type-only cycle (context.ts and dialect/types.ts name each other's types) ends here.
      else if (!seen.has(importer)) for (const user of usersOf(importer, new Set([...seen, file]))) found.add(user);
    }
    users.set(file, found);
    return found;
  };
  for (const file of files) if (!ONE_DIALECT.includes(folderOf(file))) usersOf(file, new Set([file]));
  return users;
}
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

  it('keeps outside the dialect folders only what more than one dialect, or the shared code, uses', () => {
    const oneDialectOnly = [...usersOfSharedFiles()]
      .filter(([, users]) => users.size === 1 && !users.has('shared'))
      .map(([file, users]) => `${file}: only ${[...users][0]}/ uses it`)
      .sort();
    assert.deepEqual(oneDialectOnly, []);
  });

  it('exports nothing from outside the dialect folders that only one dialect imports', () => {
    const files = sourceFiles(SRC).map((file) => relative(SRC, file));
    const folderOf = (file: string) => (file.includes('/') ? (file.split('/')[0] as string) : '');
    // Who imports each exported name: `target file:name` -> the importing files.
    const importers = new Map<string, Set<string>>();
    for (const file of files) {
      const text = readFileSync(join(SRC, file), 'utf8');
      for (const m of text.matchAll(/^(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s+'(\.[^']+)'/gms)) {
        const target = relative(SRC, resolve(dirname(join(SRC, file)), (m[2] as string).replace(/\.js$/, '.ts')));
        for (const part of (m[1] as string).split(',')) {
          const name = part
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)[0]
            ?.trim();
          if (!name) continue;
          const key = `${target}:${name}`;
          importers.set(key, (importers.get(key) ?? new Set()).add(file));
        }
      }
    }
    const oneDialectOnly = files
      .filter((file) => !ONE_DIALECT.includes(folderOf(file)))
      .flatMap((file) => {
        const text = readFileSync(join(SRC, file), 'utf8');
        return [...text.matchAll(/^export\s+(?:async\s+)?(?:const|function|type|interface|class)\s+(\w+)/gm)].flatMap((m) => {
          const name = m[1] as string;
          // Used in its own file too: shared.
          if ((text.match(new RegExp(`\\b${name}\\b`, 'g')) ?? []).length > 1) return [];
          const users = new Set(
            [...(importers.get(`${file}:${name}`) ?? [])].map((user) => (ONE_DIALECT.includes(folderOf(user)) ? folderOf(user) : 'shared')),
          );
          return users.size === 1 && !users.has('shared') ? [`${file}: ${name} (only ${[...users][0]}/ imports it)`] : [];
        });
      });
    assert.deepEqual(oneDialectOnly, []);
  });

  it('names no file outside the dialect folders after a dialect', () => {
    const named = sourceFiles(SRC)
      .map((file) => relative(SRC, file))
      .filter((file) => file.includes('/') && !DIALECT_FOLDERS.includes(file.split('/')[0] as string))
      .filter((file) => /(?:^|[/-])(?:postgres|pg|mysql|mariadb|sqlite)[-.]/.test(file));
    assert.deepEqual(named, []);
  });

  it("holds only re-exports in the package's entry points (each dialect's code is in its folder)", () => {
    const exportsMap = JSON.parse(readFileSync(join(SRC, '../package.json'), 'utf8')).exports as Record<string, { '@cairn/source'?: string }>;
    const entries = Object.values(exportsMap).flatMap((target) => (typeof target === 'object' && target['@cairn/source'] ? [target['@cairn/source']] : []));
    assert.ok(entries.length >= 3, 'the entry points are read from package.json');
    const other = entries.flatMap((entry) =>
      readFileSync(join(SRC, '..', entry), 'utf8')
        // Comments, and `export { … } from '…'` / `export type { … } from '…'` statements (one or several lines).
        .replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
        .replace(/export\s+(?:type\s+)?\{[^}]*\}\s+from\s+'[^']+';/g, '')
        .split('\n')
        .flatMap((line, i) => (line.trim() === '' ? [] : [`${entry}:${i + 1}: ${line.trim()}`])),
    );
    assert.deepEqual(other, []);
  });
});
