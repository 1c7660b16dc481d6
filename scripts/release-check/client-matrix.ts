// The client version matrix: every driver a Cairn package declares as a peer, installed at the
// oldest and at the newest version its peer range admits, one consumer project per bound. The
// bounds come from the peer ranges themselves (no table to go stale): "oldest" is the range's
// minimum version, "newest" is the range handed to npm, which installs the highest it admits.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Scenario } from './consumer.js';
import { semver } from './semver.js';
import { publicPackages, readJson, type PackageJson, ROOT } from './workspace.js';

/** The drivers of the matrix, each with the packages whose peers name it. */
export const CLIENTS = ['kysely', 'pg', 'mysql2', 'better-sqlite3', 'ioredis', 'bullmq', 'mongodb', 'pg-boss'] as const;
export type ClientName = (typeof CLIENTS)[number];
export type Bound = 'oldest' | 'newest';

/** The packages the matrix project installs from tarballs. */
const MATRIX_PACKAGES = ['@cairn/core', '@cairn/kysely', '@cairn/redis', '@cairn/mongodb', '@cairn/queue-bullmq', '@cairn/queue-pg-boss'];

export interface ClientRange {
  name: ClientName;
  range: string;
  oldest: string;
  /** `<package>` names declaring it. */
  declaredBy: string[];
}

/**
 * Each client's peer range, read from every public package that declares it. Throws when two
 * packages disagree (a user installing both would be held to the narrower one without being told)
 * or when a range has no minimum version.
 */
export function clientRanges(packages: readonly { name: string; json: PackageJson }[] = publicPackages()): ClientRange[] {
  const problems: string[] = [];
  const out: ClientRange[] = [];
  for (const client of CLIENTS) {
    const declared = packages.flatMap((p) => (p.json.peerDependencies?.[client] ? [{ pkg: p.name, range: p.json.peerDependencies[client] }] : []));
    const ranges = [...new Set(declared.map((d) => d.range))];
    if (ranges.length !== 1) {
      problems.push(
        `${client}: the peer ranges differ (${declared.map((d) => `${d.pkg} "${d.range}"`).join(', ') || 'none declared'}); declare one range everywhere`,
      );
      continue;
    }
    const range = ranges[0] as string;
    const oldest = semver.validRange(range) ? semver.minVersion(range)?.version : undefined;
    if (!oldest) {
      problems.push(`${client}: peer range "${range}" has no minimum version`);
      continue;
    }
    out.push({ name: client, range, oldest, declaredBy: declared.map((d) => d.pkg) });
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return out;
}

/** The versions the workspace type-checks with, for type packages the drivers do not bundle. */
const typesPg = () => readJson<PackageJson>(join(ROOT, 'packages', 'kysely', 'package.json')).devDependencies?.['@types/pg'] ?? 'latest';

/** The consumer scenario of one bound: all matrix packages, every client at that bound. */
export function matrixScenario(bound: Bound, urls: Record<'POSTGRES_URL' | 'MYSQL_URL' | 'REDIS_URL' | 'MONGODB_URL', string>): Scenario {
  const registry: Record<string, string> = { '@types/pg': typesPg() };
  for (const client of clientRanges()) registry[client.name] = bound === 'oldest' ? client.oldest : client.range;
  return { name: `clients-${bound}`, fixture: 'clients', packages: MATRIX_PACKAGES, registry, env: urls };
}

/**
 * What npm installed for each client in `projectDir`, checked against the bound: the oldest bound
 * must get exactly the range's minimum, the newest one a version the range admits.
 */
export function installedClients(projectDir: string, bound: Bound): { lines: string[]; problems: string[] } {
  const lines: string[] = [];
  const problems: string[] = [];
  for (const client of clientRanges()) {
    const manifest = join(projectDir, 'node_modules', client.name, 'package.json');
    const version = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version : undefined;
    lines.push(`${client.name}@${version ?? '(missing)'} (peer range "${client.range}")`);
    if (!version) problems.push(`${client.name} is not installed`);
    else if (bound === 'oldest' && version !== client.oldest)
      problems.push(`${client.name}@${version} installed, expected the range's oldest ${client.oldest}`);
    else if (!semver.satisfies(version, client.range)) problems.push(`${client.name}@${version} is outside "${client.range}"`);
  }
  return { lines, problems };
}
