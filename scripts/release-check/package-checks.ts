// Checks on a packed tarball: what `changeset publish` would upload, inspected file by file.
// Each problem is one sentence naming the package, the field or file, and what to change.
import { existsSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import ts from 'typescript';
import type { Packed } from './pack.js';
import { semver } from './semver.js';
import { ROOT, readJson, type PackageJson } from './workspace.js';

const NODE_RANGE = '>=22.12';
const DEP_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies'] as const;
const TEST_PATH = /(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.[cm]?[jt]sx?$|\.tsbuildinfo$/;

/** The name of the package a bare import specifier refers to (`@scope/name/sub` -> `@scope/name`). */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:') || isBuiltin(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * Every module specifier a .js or .d.ts file imports, re-exports or requires, as TypeScript's own
 * scanner reads them (comments and strings holding code are not imports).
 */
export function importsOf(source: string): string[] {
  const info = ts.preProcessFile(source, true, true);
  return [...new Set(info.importedFiles.map((f) => f.fileName))];
}

/** Flattens an exports map into [subpath, condition path, target] triples. */
function exportTargets(exportsField: Record<string, unknown>): { subpath: string; conditions: string[]; target: string }[] {
  const out: { subpath: string; conditions: string[]; target: string }[] = [];
  const walk = (subpath: string, value: unknown, conditions: string[]) => {
    if (typeof value === 'string') out.push({ subpath, conditions, target: value });
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(subpath, v, [...conditions, k]);
  };
  for (const [subpath, value] of Object.entries(exportsField)) walk(subpath, value, []);
  return out;
}

/**
 * Checks one packed package. `released` maps each public package's name to the version being
 * released with it (the fixed group: all the same), to check internal ranges against.
 */
export function checkPackage(packed: Packed, released: ReadonlyMap<string, string>): string[] {
  const { pkg, dir, files } = packed;
  const name = pkg.name;
  const problems: string[] = [];
  const problem = (text: string) => problems.push(`${name}: ${text}`);
  const json = readJson<PackageJson>(join(dir, 'package.json'));
  const has = (path: string) => files.includes(path);

  // Metadata.
  if (!json.description || json.description.length < 20) problem('package.json "description" is missing or too short');
  if (!Array.isArray(json.keywords) || json.keywords.length === 0) problem('package.json "keywords" is missing or empty');
  if (json.license !== 'MIT') problem(`package.json "license" is ${JSON.stringify(json.license)}, expected "MIT"`);
  const repo = json.repository;
  if (typeof repo !== 'object' || !repo.url || repo.directory !== pkg.dir) {
    problem(`package.json "repository" must be { type, url, directory: "${pkg.dir}" }, got ${JSON.stringify(repo)}`);
  }
  if (json.engines?.['node'] !== NODE_RANGE) problem(`package.json "engines.node" is ${JSON.stringify(json.engines?.['node'])}, expected "${NODE_RANGE}"`);
  if (json.type !== 'module') problem('package.json "type" must be "module" (the build is ESM)');
  if (json.sideEffects !== false) problem('package.json "sideEffects" must be false');
  for (const entry of ['dist', 'README.md', 'LICENSE']) {
    if (!json.files?.includes(entry)) problem(`package.json "files" does not list "${entry}"`);
  }
  for (const key of Object.keys(json.publishConfig ?? {})) {
    if (!['access', 'registry', 'tag', 'provenance'].includes(key))
      problem(`publishConfig.${key} was not applied by pnpm pack (left in the published package.json)`);
  }

  // Files every package needs, and files none should ship.
  if (!has('README.md')) problem('README.md is not in the tarball');
  else {
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    if (!readme.includes(name)) problem('README.md does not mention the package name');
    if (!/\b(npm (i|install)|pnpm add|yarn add)\b/.test(readme)) problem('README.md has no install command (npm i ...)');
    if (!readme.includes('```ts')) problem('README.md has no TypeScript example');
    if (/\]\((?!https?:|#)[^)]*\.md\)/.test(readme))
      problem('README.md links a relative .md path: it breaks on the npm site; link https://github.com/... instead');
  }
  if (!has('LICENSE')) problem('LICENSE is not in the tarball');
  else if (!readFileSync(join(dir, 'LICENSE'), 'utf8').includes('MIT License')) problem('LICENSE is not the MIT license');
  for (const file of files) if (TEST_PATH.test(file)) problem(`ships a test or build-cache file: ${file}`);
  // Output left over from a deleted source file would ship as dead (or worse, live) code.
  for (const file of files) {
    const m = /^dist\/(.+)\.js$/.exec(file);
    if (m && !['ts', 'mts', 'tsx'].some((ext) => existsSync(join(ROOT, pkg.dir, 'src', `${m[1]}.${ext}`)))) {
      problem(`${file} has no source in ${pkg.dir}/src (stale build output? rebuild from a clean dist)`);
    }
  }

  // exports: only types + default conditions, every target shipped, the same subpaths as in the workspace.
  const exportsField = json.exports as Record<string, unknown> | undefined;
  if (!exportsField || typeof exportsField !== 'object') problem('package.json has no "exports" map');
  else {
    if (exportsField['./package.json'] !== './package.json') problem('"exports" does not export "./package.json"');
    for (const { subpath, conditions, target } of exportTargets(exportsField)) {
      const where = `exports[${JSON.stringify(subpath)}]${conditions.map((c) => `[${JSON.stringify(c)}]`).join('')}`;
      for (const c of conditions)
        if (!['types', 'import', 'default'].includes(c))
          problem(
            `${where}: condition "${c}" must not be published (workspace-only conditions belong in "exports", with publishConfig.exports for the published map)`,
          );
      if (target.startsWith('./src/') || (/\.[cm]?ts$/.test(target) && !/\.d\.[cm]?ts$/.test(target)))
        problem(`${where} points consumers at TypeScript source ${target}`);
      if (conditions.at(-1) === 'types' && !/\.d\.[cm]?ts$/.test(target)) problem(`${where} is not a .d.ts file: ${target}`);
      // Whether the target is in the tarball: publint (FILE_DOES_NOT_EXIST), in package-lint.ts.
    }
    for (const [subpath, value] of Object.entries(exportsField)) {
      if (subpath === './package.json') continue;
      const keys = value && typeof value === 'object' ? Object.keys(value) : [];
      if (keys[0] !== 'types' || !keys.includes('default'))
        problem(`exports[${JSON.stringify(subpath)}] must be { "types", "default" } with "types" first, got ${JSON.stringify(value)}`);
    }
    const workspaceSubpaths = Object.keys(pkg.json.exports ?? {})
      .sort()
      .join(', ');
    const publishedSubpaths = Object.keys(exportsField).sort().join(', ');
    if (workspaceSubpaths !== publishedSubpaths)
      problem(`published exports (${publishedSubpaths}) differ from the workspace's (${workspaceSubpaths}): update publishConfig.exports`);
  }
  // bin targets (present, with a #! line): publint (FILE_DOES_NOT_EXIST, BIN_FILE_NOT_EXECUTABLE).

  // Dependencies: nothing pnpm-only left, internal ranges admit the versions released with them.
  for (const field of DEP_FIELDS) {
    for (const [dep, range] of Object.entries(json[field] ?? {})) {
      if (/^(workspace|catalog|link|file):/.test(range)) problem(`${field}["${dep}"] is "${range}" in the tarball: only pnpm understands that`);
      const version = released.get(dep);
      if (version && field !== 'devDependencies' && !semver.satisfies(version, range)) {
        problem(`${field}["${dep}"] is "${range}", which does not admit ${dep}@${version} released with it`);
      }
    }
  }
  // Every package the build imports must be declared, or a consumer's install will not have it.
  const declared = new Set([
    name,
    ...Object.keys(json.dependencies ?? {}),
    ...Object.keys(json.peerDependencies ?? {}),
    ...Object.keys(json.optionalDependencies ?? {}),
  ]);
  const undeclared = new Map<string, string>();
  for (const file of files) {
    if (!/^dist\/.*\.(js|d\.ts)$/.test(file)) continue;
    for (const specifier of importsOf(readFileSync(join(dir, file), 'utf8'))) {
      const dep = packageOf(specifier);
      const typesOnly = file.endsWith('.d.ts');
      if (dep && !declared.has(dep) && !(typesOnly && declared.has(dep.replace(/^@types\//, '')))) {
        if (!undeclared.has(dep)) undeclared.set(dep, file);
      }
    }
  }
  for (const [dep, file] of undeclared) {
    problem(`${file} imports "${dep}", which package.json declares in neither dependencies nor peerDependencies`);
  }
  return problems;
}
