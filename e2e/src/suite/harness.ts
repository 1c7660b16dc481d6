import type { WorkflowStore } from '@cairn/core/backend';

/**
 * Capabilities a backend may lack. Every flag defaults to "present"; set one to `false` and the
 * cases that need it are registered as skipped, by name, with the reason in the output.
 */
export interface HarnessCapabilities {
  /**
   * Several store instances opened on one namespace share their data and stay correct when they
   * race (separate connections, as separate processes would have). `false` for in-process stores
   * such as the memory store, where a second `createStore(namespace)` is a different store.
   */
  multiProcess?: boolean;
  /**
   * The largest JSON payload (bytes of its UTF-8 serialisation) the suite may write. The suite uses
   * the smallest of 1 MiB, this value and the store's own `capabilities.maxPayloadBytes`.
   */
  maxPayloadBytes?: number;
}

/**
 * Describes a backend to the conformance suite: how to get a server, and how to open a fresh,
 * isolated store on it for every test.
 */
export interface ConformanceHarness {
  /** The backend's name in test titles and the summary line, e.g. `memory`, `postgres`. */
  name: string;
  /**
   * Where the server came from, printed in the summary line (e.g. `local PostgreSQL 15 on :5433`).
   * A function is called after `setup()`, when the server's address is known.
   */
  source?: string | (() => string);
  /**
   * Starts or connects to the server, once, before the first test. Resolving `{ skip: reason }`
   * (no server could be had) skips every case at run time with that reason, by name.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a setup that returns nothing (`async setup() {}`) must type-check; `undefined` in its place would reject it
  setup?(): Promise<void | HarnessSetupResult>;
  /**
   * Opens a store in `namespace` (a database, schema, key prefix...), empty on first use. Called once
   * per test with a fresh namespace (lowercase letters, digits and `_`, at most 24 characters).
   * Cases that need `capabilities.multiProcess` call it a second time with the same namespace and
   * expect a second instance that sees the first one's data.
   */
  createStore(namespace: string): Promise<WorkflowStore>;
  /**
   * Closes the store of a finished test and drops its namespace. Called once per test for the first
   * instance only (extra instances are closed with `store.close()`). Absent: `store.close()`.
   */
  destroyStore?(store: WorkflowStore, namespace: string): Promise<void>;
  /** Stops or disconnects the server, once, after the last test. */
  teardown?(): Promise<void>;
  /**
   * Raw inspection for the deleteRun case: every row, key or document the backend still holds that
   * belongs to `runId`, as strings for the failure message. Absent: that case is skipped by name.
   */
  artefactsOf?(store: WorkflowStore, namespace: string, runId: string): Promise<string[]>;
  /**
   * Raw inspection for the payload-codec case: everything the backend holds in `namespace` — every
   * row of every table, every document of every collection, every key with its value — as text,
   * read past the store's API (binary values as UTF-8). The case looks for plaintext in it.
   * Absent: that case is skipped by name.
   */
  rawContents?(store: WorkflowStore, namespace: string): Promise<string[]>;
  /**
   * Ends, from the server's side, every connection on which the store's signals listen in
   * `namespace` (as a network failure or a server-side kill would), and resolves with how many it
   * ended; the stores then reconnect on their own. For the pushed-results case of a listener that
   * is killed and comes back, which then expects the store's listeners to be told of the loss
   * (`onLost`) and of the return (`onSignal()`). Absent (or a store without signals): that case
   * checks nothing.
   */
  dropSignalConnections?(store: WorkflowStore, namespace: string): Promise<number>;
  /** Capabilities the backend lacks. */
  capabilities?: HarnessCapabilities;
}

/** What `ConformanceHarness.setup` may resolve with. */
export interface HarnessSetupResult {
  /** Why this backend cannot be tested here (e.g. no PostgreSQL available); every case is skipped. */
  skip?: string;
}

/** Options of `runConformance`. */
export interface ConformanceOptions {
  /**
   * Registers only the groups whose id starts with one of these (e.g. `store`, `store.runs`,
   * `engine.retries`, `adversarial`). Default: every group. `CAIRN_CONFORMANCE_ONLY` (comma
   * separated) is read when this is absent, which is how the CLI's `--only` reaches the suite.
   */
  only?: string[];
}
