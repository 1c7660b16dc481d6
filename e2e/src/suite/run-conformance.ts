import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { WorkflowStore } from '@cairn/core';
import type { CaseEnv, CaseGroup, ConformanceCase, Requirement } from './case.js';
import { MAX_SUITE_PAYLOAD_BYTES } from './fixtures/payloads.js';
import { allGroups } from './groups.js';
import type { ConformanceHarness, ConformanceOptions } from './harness.js';

/** Why a case is skipped when the harness lacks what it requires. */
const SKIP_REASONS: Record<Requirement, string> = {
  multiProcess: 'needs two store instances sharing one namespace (capability multiProcess absent)',
  artefactsOf: 'needs raw inspection of the backend (harness.artefactsOf absent)',
};

/** The reason `harness` cannot run a case with `requires`, or undefined when it can. */
export function skipReason(harness: ConformanceHarness, requires: readonly Requirement[]): string | undefined {
  for (const requirement of requires) {
    if (requirement === 'multiProcess' && harness.capabilities?.multiProcess === false) return SKIP_REASONS.multiProcess;
    if (requirement === 'artefactsOf' && harness.artefactsOf === undefined) return SKIP_REASONS.artefactsOf;
  }
  return undefined;
}

/** The groups `only` selects (by id prefix at a dot boundary); every group when it is empty. */
export function selectGroups(groups: readonly CaseGroup[], only: readonly string[] | undefined): CaseGroup[] {
  if (only === undefined || only.length === 0) return [...groups];
  return groups.filter((g) => only.some((o) => g.id === o || g.id.startsWith(`${o}.`)));
}

function onlyFromEnvironment(): string[] | undefined {
  const raw = process.env.CAIRN_CONFORMANCE_ONLY;
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

/** A fresh namespace: lowercase letters, digits and `_`, 20 characters, unique per case. */
export function newNamespace(): string {
  return `cf_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

function sourceOf(harness: ConformanceHarness): string {
  try {
    const source = typeof harness.source === 'function' ? harness.source() : harness.source;
    return source ?? 'source not stated';
  } catch (error) {
    return `source unknown (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Runs one case in its own namespace and store, then cleans up whatever happened. */
async function runCase(harness: ConformanceHarness, testCase: ConformanceCase): Promise<void> {
  const namespace = newNamespace();
  const store = await harness.createStore(namespace);
  const peers: WorkflowStore[] = [];
  const deferred: Array<() => Promise<void> | void> = [];
  const env: CaseEnv = {
    store,
    namespace,
    harness,
    t0: Date.now(),
    payloadLimit: Math.min(MAX_SUITE_PAYLOAD_BYTES, harness.capabilities?.maxPayloadBytes ?? Infinity, store.capabilities.maxPayloadBytes),
    openPeer: async () => {
      const peer = await harness.createStore(namespace);
      peers.push(peer);
      return peer;
    },
    defer: (fn) => void deferred.push(fn),
  };
  let failure: { error: unknown } | undefined;
  try {
    await testCase.run(env);
  } catch (error) {
    failure = { error };
  }
  // Cleanup always runs, and a cleanup error never hides the case's own failure.
  const cleanups = [
    ...deferred.reverse(),
    ...peers.map((p) => () => p.close()),
    () => (harness.destroyStore ? harness.destroyStore(store, namespace) : store.close()),
  ];
  for (const cleanup of cleanups) {
    try {
      await cleanup();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

/**
 * Registers the conformance suite for `harness` as `node:test` suites: the store contract, engine
 * scenarios over the store, and adversarial cases. Every case gets a fresh namespace and store.
 * Cases the backend cannot run are registered as skipped with the reason, never left out. After
 * the last case a summary line gives the backend, the server's source and the counts.
 */
export function runConformance(harness: ConformanceHarness, options: ConformanceOptions = {}): void {
  const groups = selectGroups(allGroups, options.only ?? onlyFromEnvironment());
  const counts = { total: 0, passed: 0, skipped: 0 };
  let unavailable: string | undefined;

  describe(`conformance: ${harness.name}`, () => {
    before(async () => {
      const result = await harness.setup?.();
      if (result && typeof result.skip === 'string') unavailable = result.skip;
    });

    after(async (context) => {
      try {
        await harness.teardown?.();
      } finally {
        // Cases whose body never ran (a failed setup) count as failed, not as missing.
        const failed = counts.total - counts.passed - counts.skipped;
        const source = unavailable === undefined ? sourceOf(harness) : `unavailable: ${unavailable}`;
        const line = `conformance ${harness.name} (${source}): ${counts.passed} passed, ${failed} failed, ${counts.skipped} skipped`;
        // A suite-level hook gets a SuiteContext without `diagnostic` on some Node versions.
        if ('diagnostic' in context && typeof context.diagnostic === 'function') context.diagnostic(line);
        else console.log(`# ${line}`);
      }
    });

    for (const group of groups) {
      describe(group.title, () => {
        for (const testCase of group.cases) {
          counts.total += 1;
          const reason = skipReason(harness, testCase.requires);
          if (reason !== undefined) {
            counts.skipped += 1;
            it(testCase.name, { skip: reason }, () => {});
            continue;
          }
          it(testCase.name, async (t) => {
            if (unavailable !== undefined) {
              counts.skipped += 1;
              t.skip(`${harness.name} unavailable: ${unavailable}`);
              return;
            }
            await runCase(harness, testCase);
            counts.passed += 1;
          });
        }
      });
    }
  });
}
