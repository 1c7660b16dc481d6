// `changeset version` in a temporary copy of the repository: what the next release would write
// (versions, ranges, CHANGELOG entries), checked against the rules of our fixed 0.x group.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execOk } from './exec.js';
import { semver } from './semver.js';
import { ROOT, workspacePackages, type PackageJson } from './workspace.js';

export interface DryRunReport {
  /** What the release would do, for the log. */
  lines: string[];
  /** Rules it would break. */
  problems: string[];
  /** The version each public package would be released at. */
  versions: Map<string, string>;
}

const INTERNAL_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies'] as const;

function pendingChangesets(root: string): string[] {
  return readdirSync(join(root, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
}

/** Copies just what changesets reads: manifests, changelogs, the workspace file and .changeset/. */
function copyRepo(root: string, into: string): void {
  const copy = (rel: string) => {
    if (!existsSync(join(root, rel))) return;
    mkdirSync(dirname(join(into, rel)), { recursive: true });
    copyFileSync(join(root, rel), join(into, rel));
  };
  for (const rel of ['package.json', 'pnpm-workspace.yaml']) copy(rel);
  for (const file of readdirSync(join(root, '.changeset'))) copy(join('.changeset', file));
  for (const pkg of workspacePackages(root)) {
    copy(join(pkg.dir, 'package.json'));
    copy(join(pkg.dir, 'CHANGELOG.md'));
  }
  // The changelog generator (@changesets/cli/changelog) is resolved from the copy.
  symlinkSync(join(root, 'node_modules'), join(into, 'node_modules'));
}

/** Runs the dry run in `tmpDir` (an empty directory) and reports what it would release. */
export async function versionDryRun(tmpDir: string, root = ROOT): Promise<DryRunReport> {
  const lines: string[] = [];
  const problems: string[] = [];
  const versions = new Map<string, string>();
  const changesets = pendingChangesets(root);
  const before = workspacePackages(root);
  if (changesets.length === 0) {
    lines.push('no pending changesets: `changeset version` would change nothing');
    for (const pkg of before) if (pkg.json.private !== true) versions.set(pkg.name, pkg.json.version);
    return { lines, problems, versions };
  }
  const askedMajor = changesets.some((f) =>
    /^\s*["']?[@\w/.-]+["']?\s*:\s*major\s*$/m.test(readFileSync(join(root, '.changeset', f), 'utf8').split('---')[1] ?? ''),
  );

  copyRepo(root, tmpDir);
  const result = await execOk('changeset version (dry run)', process.execPath, [join(root, 'scripts', 'release-check', 'changeset.mjs'), 'version'], {
    cwd: tmpDir,
  });
  lines.push(
    ...result.output
      .trim()
      .split('\n')
      .map((l) => `  ${l}`),
  );
  lines.push(`consumed ${changesets.length} changeset(s): ${changesets.join(', ')}`);

  const after = new Map(workspacePackages(tmpDir).map((p) => [p.name, p.json]));
  const publicVersions = new Set<string>();
  for (const pkg of before) {
    const next = after.get(pkg.name) as PackageJson;
    if (pkg.json.private === true) {
      if (next.version !== pkg.json.version)
        problems.push(`private ${pkg.name} would be versioned ${pkg.json.version} → ${next.version} (privatePackages.version must stay false)`);
      continue;
    }
    versions.set(pkg.name, next.version);
    publicVersions.add(next.version);
    lines.push(`\n${pkg.name}: ${pkg.json.version} → ${next.version}`);
    if (semver.major(next.version) > semver.major(pkg.json.version) && !askedMajor) {
      problems.push(`${pkg.name} would go ${pkg.json.version} → ${next.version}, a major no changeset asked for`);
    }
    for (const field of INTERNAL_FIELDS) {
      for (const [dep, range] of Object.entries(next[field] ?? {})) {
        const old = pkg.json[field]?.[dep];
        if (old !== range) lines.push(`  ${field}["${dep}"]: ${old} → ${range}`);
      }
    }
    const oldLog = existsSync(join(root, pkg.dir, 'CHANGELOG.md')) ? readFileSync(join(root, pkg.dir, 'CHANGELOG.md'), 'utf8') : '';
    const newLog = existsSync(join(tmpDir, pkg.dir, 'CHANGELOG.md')) ? readFileSync(join(tmpDir, pkg.dir, 'CHANGELOG.md'), 'utf8') : '';
    const entry = newLog
      .replace(oldLog.replace(/^# .*\n+/, ''), '')
      .replace(/^# .*\n+/, '')
      .trim();
    if (next.version !== pkg.json.version && !entry) problems.push(`${pkg.name} would be released without a CHANGELOG entry`);
    if (entry)
      lines.push(
        `  CHANGELOG.md:\n${entry
          .split('\n')
          .map((l) => `    | ${l}`)
          .join('\n')}`,
      );
  }
  if (publicVersions.size > 1) problems.push(`the fixed group would split: ${[...versions].map(([n, v]) => `${n}@${v}`).join(', ')}`);
  // Internal ranges written by the release must admit the versions released with them.
  for (const [name, json] of after) {
    if (json.private === true) continue;
    for (const field of INTERNAL_FIELDS) {
      for (const [dep, range] of Object.entries(json[field] ?? {})) {
        const version = versions.get(dep);
        if (version && !range.startsWith('workspace:') && !semver.satisfies(version, range)) {
          problems.push(`${name} ${field}["${dep}"] would be "${range}", which does not admit ${dep}@${version}`);
        }
      }
    }
  }
  const left = pendingChangesets(tmpDir);
  if (left.length > 0) problems.push(`changesets left unconsumed: ${left.join(', ')}`);
  return { lines, problems, versions };
}
