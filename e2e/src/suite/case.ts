import type { WorkflowStore } from '@cairn/core/backend';
import type { ConformanceHarness } from './harness.js';

/**
 * What a case may need beyond the store contract; missing ones skip the case by name. `slots` is
 * the flow-control contract (the optional `WorkflowStore.slots` and run priority, adopted
 * together), `streams` the optional `WorkflowStore.streams`, `deleteMany` the optional batched
 * `runs.deleteMany`, `pauses` the optional `WorkflowStore.pauses`, `tags` the optional
 * `runs.setTags` (the tag capability), and `bulk` the optional `WorkflowStore.bulk`, are known
 * only once the case's store is open.
 */
export type Requirement = 'multiProcess' | 'artefactsOf' | 'rawContents' | 'slots' | 'streams' | 'deleteMany' | 'promiseWake' | 'pauses' | 'tags' | 'bulk';

/** Everything one case gets: its own namespace, its own store, and a cleanup stack. */
export interface CaseEnv {
  /** The store under test, fresh and empty, in `namespace`. */
  store: WorkflowStore;
  /** This case's namespace, unique to it. */
  namespace: string;
  harness: ConformanceHarness;
  /** A base time for the case (epoch ms, taken when it started); every `now` is an offset of it. */
  t0: number;
  /** The payload size the case may use: min(1 MiB, harness and store `maxPayloadBytes`). */
  payloadLimit: number;
  /** A second store instance on the same namespace (only in `multiProcess` cases). */
  openPeer(): Promise<WorkflowStore>;
  /** Runs `fn` when the case ends, before the store is destroyed (last registered runs first). */
  defer(fn: () => Promise<void> | void): void;
}

/** One conformance case: a name, what it needs, and its body. */
export interface ConformanceCase {
  name: string;
  requires: Requirement[];
  run(env: CaseEnv): Promise<void>;
}

/** A named group of cases, registered as one `describe` (its id selects it in `only`). */
export interface CaseGroup {
  /** Dotted id, e.g. `store.runs`, `engine.retries`, `adversarial.racing-claimers`. */
  id: string;
  title: string;
  cases: ConformanceCase[];
}

/** Declares one case. */
export function conformanceCase(name: string, run: (env: CaseEnv) => Promise<void>, options: { requires?: Requirement[] } = {}): ConformanceCase {
  return { name, requires: options.requires ?? [], run };
}

/** Declares a group of cases. */
export function caseGroup(id: string, title: string, cases: ConformanceCase[]): CaseGroup {
  return { id, title, cases };
}
