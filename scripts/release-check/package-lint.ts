// The standard linters on each packed tarball: publint (package.json fields against the files
// shipped: every exports target exists, "types" first, bins executable, formats) and
// @arethetypeswrong/cli (every entry point resolves to types and JavaScript the way TypeScript
// resolves it). What they cover is no longer checked by hand in package-checks.ts.
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { exec, tail } from './exec.js';
import { readJson, ROOT } from './workspace.js';

/**
 * attw profile: the packages are ESM only (`"type": "module"`, no CommonJS build, Node >= 22.12,
 * where `require()` of ESM works), so the `node10` resolution (which ignores "exports") and
 * CommonJS resolutions reaching ESM are not problems of ours (docs/decisions.md, 42).
 */
export const ATTW_PROFILE = 'esm-only';

/** publint's findings for an unpacked tarball (`dir` = its `package/`), every level, one sentence each. */
export async function publintProblems(name: string, dir: string): Promise<string[]> {
  // pack: false lints the files on disk, which here are exactly the tarball's.
  const { messages } = await publint({ pkgDir: dir, level: 'suggestion', pack: false, strict: true });
  const pkg = readJson<Record<string, unknown>>(join(dir, 'package.json'));
  return messages.map((m) => `${name}: publint ${m.type} ${m.code}: ${formatMessage(m, pkg, { color: false }) ?? m.code}`);
}

/** attw's verdict on a tarball: no problem lines, or its report. */
export async function attwProblems(name: string, tarball: string): Promise<string[]> {
  const bin = join(ROOT, 'node_modules', '.bin', 'attw');
  const result = await exec(bin, [tarball, '--profile', ATTW_PROFILE, '--format', 'ascii', '--no-color', '--no-emoji', '--no-definitely-typed'], {
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  if (result.code === 0) return [];
  return [`${name}: attw (--profile ${ATTW_PROFILE}) found problems:\n${tail(result.output, 40)}`];
}
