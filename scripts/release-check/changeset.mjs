#!/usr/bin/env node
// `pnpm changeset <command>`: the changesets CLI of the workspace (2.31), with one correction
// applied to every release plan it assembles (`status`, `version`): a 0.x package is not released
// as 1.0.0 just because a peer dependency had a minor release (see zero-major.mjs). Everything
// else — arguments, output, exit codes — is the CLI's own.
import { createRequire } from 'node:module';
import { keepZeroMajorsMinor } from './zero-major.mjs';

const require = createRequire(import.meta.url);
// Resolve from the CLI itself, so we patch the very module instances it loads.
const cliRequire = createRequire(require.resolve('@changesets/cli/package.json'));
const assemble = cliRequire('@changesets/assemble-release-plan');
const semver = cliRequire('semver');

const original = assemble.default;
if (typeof original !== 'function') {
  throw new Error(
    'scripts/release-check/changeset.mjs: @changesets/assemble-release-plan has no default export; update the 0.x correction for this changesets version',
  );
}
// The CLI calls `assembleReleasePlan__default.default(...)` at call time, so replacing the export works.
assemble.default = function assembleReleasePlan(changesets, packages, config, preState, snapshot) {
  const plan = original(changesets, packages, config, preState, snapshot);
  // Pre-release and snapshot versions carry suffixes this correction does not compute.
  if ((preState && preState.mode === 'pre') || snapshot !== undefined) return plan;
  const demoted = keepZeroMajorsMinor(plan, config, semver);
  if (demoted.length > 0 && process.env.CAIRN_CHANGESET_QUIET !== '1') {
    process.stderr.write(
      `🦋  cairn: kept ${demoted.map((d) => `${d.name} at ${d.to}`).join(', ')} instead of ${demoted[0].from}: ` +
        'a peer minor in 0.x is not a major (no changeset asked for one)\n',
    );
  }
  return plan;
};

cliRequire('@changesets/cli/bin.js');
