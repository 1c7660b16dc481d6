import { describe, it } from 'node:test';
import type { CaseGroup, ConformanceCase, Requirement } from './case.js';
import { MAX_SUITE_PAYLOAD_BYTES } from './fixtures/payloads.js';
import { allGroups } from './groups.js';
import type { ConformanceHarness, ConformanceOptions } from './harness.js';
import { runInFreshNamespace } from './run-in-fresh-namespace.js';
import { registerSuiteHooks } from './suite-hooks.js';

/** Why a case is skipped when the harness lacks what it requires. */
const SKIP_REASONS: Record<Requirement, string> = {
  multiProcess: 'needs two store instances sharing one namespace (capability multiProcess absent)',
  artefactsOf: 'needs raw inspection of the backend (harness.artefactsOf absent)',
  rawContents: 'needs the raw contents of the backend (harness.rawContents absent)',
  slots: 'needs the flow-control contract (store.slots and run priority), which this store has not adopted yet',
  streams: 'needs named streams (store.streams), which this store has not adopted yet',
  deleteMany: 'needs the optional runs.deleteMany (retention deletes one run at a time on this store)',
  promiseWake: 'needs the optional runs.promiseWake and runs.keepPromise (the engine pre-wakes a parent with runs.wake on this store)',
  pauses: 'needs pause and resume (store.pauses), which this store has not adopted yet',
  tags: 'needs run tags (runs.setTags), which this store has not adopted yet',
  bulk: 'needs bulk operation records (store.bulk), which this store has not adopted yet',
};

/** The reason `harness` cannot run a case with `requires`, or undefined when it can. */
export function skipReason(harness: ConformanceHarness, requires: readonly Requirement[]): string | undefined {
  for (const requirement of requires) {
    if (requirement === 'multiProcess' && harness.capabilities?.multiProcess === false) return SKIP_REASONS.multiProcess;
    if (requirement === 'artefactsOf' && harness.artefactsOf === undefined) return SKIP_REASONS.artefactsOf;
    if (requirement === 'rawContents' && harness.rawContents === undefined) return SKIP_REASONS.rawContents;
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
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Runs one case in its own namespace and store, then cleans up whatever happened. Returns the skip
 * reason when the opened store lacks a part the case requires (`slots`, `deleteMany`).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a case body that returns nothing passes; `undefined` would make every body end in `return undefined`
async function runCase(harness: ConformanceHarness, testCase: ConformanceCase): Promise<string | void> {
  return runInFreshNamespace(
    (namespace) => harness.createStore(namespace),
    (store, namespace) => (harness.destroyStore ? harness.destroyStore(store, namespace) : store.close()),
    async ({ namespace, resource: store, openPeer, defer }) => {
      if (testCase.requires.includes('slots') && store.slots === undefined) return SKIP_REASONS.slots;
      if (testCase.requires.includes('streams') && store.streams === undefined) return SKIP_REASONS.streams;
      if (testCase.requires.includes('deleteMany') && store.runs.deleteMany === undefined) return SKIP_REASONS.deleteMany;
      if (testCase.requires.includes('promiseWake') && (store.runs.promiseWake === undefined || store.runs.keepPromise === undefined))
        return SKIP_REASONS.promiseWake;
      if (testCase.requires.includes('pauses') && store.pauses === undefined) return SKIP_REASONS.pauses;
      if (testCase.requires.includes('tags') && store.runs.setTags === undefined) return SKIP_REASONS.tags;
      if (testCase.requires.includes('bulk') && store.bulk === undefined) return SKIP_REASONS.bulk;
      return testCase.run({
        store,
        namespace,
        harness,
        t0: Date.now(),
        payloadLimit: Math.min(MAX_SUITE_PAYLOAD_BYTES, harness.capabilities?.maxPayloadBytes ?? Infinity, store.capabilities.maxPayloadBytes),
        openPeer,
        defer,
      });
    },
  );
}

/**
 * Registers the conformance suite for `harness` as `node:test` suites: the store contract, engine
 * scenarios over the store, and adversarial cases. Every case gets a fresh namespace and store.
 * Cases the backend cannot run are registered as skipped with the reason, never left out. After
 * the last case a summary line gives the backend, the server's source and the counts.
 */
export function runConformance(harness: ConformanceHarness, options: ConformanceOptions = {}): void {
  const groups = selectGroups(allGroups, options.only ?? onlyFromEnvironment());
  describe(`conformance: ${harness.name}`, () => {
    const progress = registerSuiteHooks('conformance', harness);
    for (const group of groups) {
      describe(group.title, () => {
        for (const testCase of group.cases) {
          progress.counts.total += 1;
          const reason = skipReason(harness, testCase.requires);
          if (reason !== undefined) {
            progress.counts.skipped += 1;
            it(testCase.name, { skip: reason }, () => {});
            continue;
          }
          it(testCase.name, (t) => progress.runCase(t, () => runCase(harness, testCase)));
        }
      });
    }
  });
}
