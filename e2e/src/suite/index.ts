export { runConformance, selectGroups, skipReason } from './run-conformance.js';
export { newNamespace } from './run-in-fresh-namespace.js';
export type { ConformanceHarness, ConformanceOptions, HarnessCapabilities, HarnessSetupResult } from './harness.js';
export type { CaseEnv, CaseGroup, ConformanceCase, Requirement } from './case.js';
// The counting wrapper is core's (`@cairn/core/backend`), re-exported where the suite's users found it.
export { countingStore } from '@cairn/core/backend';
export type { CountingStore, StoreCall } from '@cairn/core/backend';
export { allGroups } from './groups.js';
export { memoryHarness } from './memory-harness.js';
// The fuzz cases' seeded generator, for backends' own generated tests (a failing seed replays alike).
export { mulberry32 } from './fixtures/random-program.js';
