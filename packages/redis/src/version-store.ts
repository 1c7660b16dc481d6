import { CairnError } from '@cairn/core';
import type { VersionRecord, VersionStore } from '@cairn/core/backend';
import { isEmpty, parseVersion, toHash, type Hash } from './codec.js';
import type { StoreContext } from './context.js';
import { versionMember } from './keys.js';

const record = (hash: Hash): VersionRecord => {
  const { seq: _seq, ...version } = parseVersion(hash);
  return version;
};

/** The `versions` part: one hash per (workflow, version), listed by a per-workflow sorted set. */
export function createVersionStore(ctx: StoreContext): VersionStore {
  const k = ctx.keys;
  return {
    async upsert(workflow, version, descriptor, now) {
      const reply = await ctx.caller.script(
        ctx.scripts.upsertVersion,
        [k.version(workflow, version), k.versions(workflow), k.versionSeq],
        [workflow, version, JSON.stringify(descriptor), String(now), versionMember(workflow, version)],
      );
      return record(toHash(reply));
    },

    async get(workflow, version) {
      const hash = toHash(await ctx.caller.command('versions.get', 'HGETALL', [k.version(workflow, version)]));
      return isEmpty(hash) ? undefined : record(hash);
    },

    async list(workflow) {
      const reply = await ctx.caller.script(ctx.scripts.listVersions, [k.versions(workflow)], [`${k.global}:version:`]);
      return (Array.isArray(reply) ? reply : [])
        .map((fields) => parseVersion(toHash(fields)))
        .sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq)
        .map(({ seq: _seq, ...version }) => version);
    },

    async setStatus(workflow, version, status, now) {
      const hash = toHash(await ctx.caller.script(ctx.scripts.setVersionStatus, [k.version(workflow, version)], [status, String(now)]));
      if (isEmpty(hash)) {
        throw new CairnError('VERSION_NOT_FOUND', `Version ${version} of ${workflow} is not registered`, { data: { workflow, version } });
      }
      return record(hash);
    },
  };
}
