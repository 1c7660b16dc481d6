// Keeps 0.x packages on 0.x when a peer dependency's minor release is all that asks for a major.
//
// changesets 2.x (2.31 here) bumps every peer dependent a *major* when a release leaves its peer
// range, and in 0.x every minor leaves a caret range (^0.1.0 does not admit 0.2.0). Our adapters
// peer on `@cairn/core: ^0.x.0` and sit in one fixed group, so a single `minor` changeset for
// `@cairn/core` would release every package as 1.0.0 (changesets issue #794; 3.x bumps such
// dependents a patch instead). `onlyUpdatePeerDependentsWhenOutOfRange` does not help: the range
// *is* left. This demotes those majors to minors, unless a changeset asked for a major of the
// package or of a package in its fixed or linked group. apply-release-plan then rewrites the
// peer ranges that the new version left (`^0.1.0` -> `^0.2.0`), as it does for any release.

/**
 * @param {{ changesets: { releases: { name: string, type: string }[] }[], releases: { name: string, type: string, oldVersion: string, newVersion: string }[] }} plan
 *   a release plan from @changesets/assemble-release-plan (mutated in place)
 * @param {{ fixed?: string[][], linked?: string[][] }} config
 * @param {typeof import('semver')} semver
 * @returns {{ name: string, from: string, to: string }[]} the releases that were demoted
 */
export function keepZeroMajorsMinor(plan, config, semver) {
  const askedMajor = new Set();
  for (const changeset of plan.changesets) {
    for (const release of changeset.releases) if (release.type === 'major') askedMajor.add(release.name);
  }
  const groups = [...(config.fixed ?? []), ...(config.linked ?? [])];
  const majorWanted = (name) => askedMajor.has(name) || groups.some((group) => group.includes(name) && group.some((member) => askedMajor.has(member)));
  const demoted = [];
  for (const release of plan.releases) {
    if (release.type !== 'major' || semver.major(release.oldVersion) !== 0 || majorWanted(release.name)) continue;
    const to = semver.inc(release.oldVersion, 'minor');
    demoted.push({ name: release.name, from: release.newVersion, to });
    release.type = 'minor';
    release.newVersion = to;
  }
  return demoted;
}
