import { CairnError } from '@cairn/core';
import type { VersionRecord, VersionStore } from '@cairn/core/backend';
import type { StoreContext } from './context.js';
import { toVersionRecord } from './documents.js';
import { contention, guard, isDuplicateKey } from './errors.js';
import { encodeJson } from './json-codec.js';

const lockKey = (workflow: string, version: string) => `\u0000version\u0000${workflow}\u0000${version}`;

/**
 * The `versions` part of the store: collection `<prefix>versions`, unique on (workflow, version).
 * `upsert` is one `findOneAndUpdate` with `upsert: true`; two racing first registrations can both
 * try the insert, and the unique index turns the loser's into a duplicate-key error, which is
 * retried as the plain update it now is.
 */
export function createVersionStore(ctx: StoreContext): VersionStore {
  return {
    upsert: (workflow, version, descriptor, now) =>
      guard('versions.upsert', () =>
        ctx.exclusive(lockKey(workflow, version), async (): Promise<VersionRecord> => {
          for (let i = 0; i < 4; i++) {
            try {
              const doc = await ctx.versions.findOneAndUpdate(
                { workflow, version },
                {
                  $set: { descriptor: encodeJson(descriptor), updatedAt: now },
                  $setOnInsert: { status: 'active', createdAt: now },
                },
                { upsert: true, returnDocument: 'after' },
              );
              if (doc) return toVersionRecord(doc);
            } catch (err) {
              if (!isDuplicateKey(err)) throw err;
            }
          }
          throw contention('versions.upsert', `${workflow}@${version}`);
        }),
      ),
    get: (workflow, version) =>
      guard('versions.get', async () => {
        const doc = await ctx.versions.findOne({ workflow, version });
        return doc ? toVersionRecord(doc) : undefined;
      }),
    list: (workflow) =>
      guard('versions.list', async () => {
        const docs = await ctx.versions.find({ workflow }).sort({ createdAt: 1, _id: 1 }).toArray();
        return docs.map(toVersionRecord);
      }),
    setStatus: (workflow, version, status, now) =>
      guard('versions.setStatus', () =>
        ctx.exclusive(lockKey(workflow, version), async () => {
          const doc = await ctx.versions.findOneAndUpdate({ workflow, version }, { $set: { status, updatedAt: now } }, { returnDocument: 'after' });
          if (!doc) {
            throw new CairnError('VERSION_NOT_FOUND', `Version ${version} of ${workflow} is not registered`, {
              data: { workflow, version },
            });
          }
          return toVersionRecord(doc);
        }),
      ),
  };
}
