// The workspace's packages, read from pnpm-workspace.yaml and each package.json.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

export interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  description?: string;
  keywords?: string[];
  license?: string;
  repository?: { type?: string; url?: string; directory?: string } | string;
  engines?: Record<string, string>;
  type?: string;
  sideEffects?: boolean | string[];
  files?: string[];
  bin?: Record<string, string> | string;
  exports?: Record<string, unknown>;
  publishConfig?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

export interface WorkspacePackage {
  name: string;
  /** Directory relative to the root (`packages/core`, `e2e`). */
  dir: string;
  json: PackageJson;
}

export const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

/** The `packages:` globs of pnpm-workspace.yaml (`dir` or `dir/*`). */
function workspaceGlobs(root: string): string[] {
  const globs: string[] = [];
  let inPackages = false;
  for (const line of readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8').split('\n')) {
    if (/^packages:\s*$/.test(line)) inPackages = true;
    else if (/^\S/.test(line)) inPackages = false;
    else if (inPackages) {
      const m = /^\s+-\s+['"]?([^'"\s]+)['"]?\s*$/.exec(line);
      if (m) globs.push(m[1] as string);
    }
  }
  return globs;
}

/** Every package of the workspace (not the root), in a stable order. */
export function workspacePackages(root = ROOT): WorkspacePackage[] {
  const dirs: string[] = [];
  for (const glob of workspaceGlobs(root)) {
    if (glob.endsWith('/*')) {
      const parent = glob.slice(0, -2);
      if (!existsSync(join(root, parent))) continue;
      for (const entry of readdirSync(join(root, parent), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.isDirectory()) dirs.push(`${parent}/${entry.name}`);
      }
    } else if (!/[*?{]/.test(glob)) {
      dirs.push(glob);
    } else {
      throw new Error(`pnpm-workspace.yaml: glob ${glob} is not supported by scripts/release-check/workspace.ts`);
    }
  }
  return dirs
    .filter((dir) => existsSync(join(root, dir, 'package.json')))
    .map((dir) => {
      const json = readJson<PackageJson>(join(root, dir, 'package.json'));
      return { name: json.name, dir: relative(root, join(root, dir)), json };
    });
}

/** The packages that are published: every workspace package that is not private. */
export const publicPackages = (root = ROOT): WorkspacePackage[] => workspacePackages(root).filter((p) => p.json.private !== true);
