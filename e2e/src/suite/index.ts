export { runConformance, selectGroups, skipReason } from './run-conformance.js';
export { newNamespace } from './run-in-fresh-namespace.js';
export type { ConformanceHarness, ConformanceOptions, HarnessCapabilities, HarnessSetupResult } from './harness.js';
export type { CaseEnv, CaseGroup, ConformanceCase, Requirement } from './case.js';
export { countingStore } from './counting-store.js';
export type { CountingStore, StoreCall } from './counting-store.js';
export { allGroups } from './groups.js';
export { memoryHarness } from './memory-harness.js';
