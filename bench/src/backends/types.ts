import type { WorkflowStore } from '@cairn/core/backend';
import type { AnyDb } from './sql-drivers.js';
import type { StoreProbe } from '../instrument/counting-store.js';
import type { RoundTripCounter } from '../instrument/round-trips.js';
import type { BenchConfig } from '../config.js';
import type { Servers } from '../servers/servers.js';

/** The backends the harness knows, in table order. */
export type BackendName = 'memory' | 'sqlite' | 'postgres' | 'mysql' | 'mongodb' | 'redis';

/** What a backend adapter gets at setup. */
export interface BackendContext {
  readonly servers: Servers;
  /** A temporary directory the adapter may use (SQLite files). Removed at exit. */
  readonly tmpDir: string;
  readonly log: (line: string) => void;
}

/** A store opened on a fresh namespace (database, schema, prefix), counted. */
export interface OpenedStore {
  /** The counted store and its execution windows. */
  readonly probe: StoreProbe;
  /** Another store over the same data through its own connection (a "client" process's view). */
  peer(): Promise<WorkflowStore>;
  /** What a worker process needs to open the same store (see `connectStore`), when supported. */
  readonly spec?: StoreSpec;
  /**
   * The SQL tables behind the store (SQL backends only), for a scenario that writes rows directly
   * (the check scenario clones a recorded run): the counted Kysely instance, the table prefix and
   * the dialect.
   */
  readonly sql?: { readonly db: AnyDb; readonly tablePrefix: string; readonly dialect: 'postgres' | 'sqlite' | 'mysql' };
  close(): Promise<void>;
}

/** A JSON description of a store, for worker processes. */
export interface StoreSpec {
  backend: BackendName;
  url: string;
  namespace: string;
}

/** A backend ready to open stores. */
export interface BackendInstance {
  readonly name: BackendName;
  /** Row label in the tables, e.g. `PostgreSQL`. */
  readonly title: string;
  /** Server product and version, and how durable it is configured. */
  readonly server: string;
  /** False for the in-process memory store: its "round trips" are store calls. */
  readonly driverCounted: boolean;
  /** Counts every request the driver sends (shared by every store this instance opens). */
  readonly counter: RoundTripCounter;
  openStore(): Promise<OpenedStore>;
  /**
   * Smaller sizes for a backend whose cost per step grows with the run's length, so that the full
   * bench stays within minutes; the note says why and is printed under the tables.
   */
  scale?: (config: BenchConfig) => { config: BenchConfig; note: string } | undefined;
  /** A monotonic count of write transactions on the server (PostgreSQL: transaction ids assigned), if it can tell. */
  writeTransactions?: () => Promise<number>;
  /** CPU the server's processes have used so far, in ms (PostgreSQL started by the bench, on Linux), if it can tell. */
  serverCpuMs?: () => number | undefined;
  close(): Promise<void>;
}

/** One file per backend under `src/backends/` exports one of these. */
export interface BackendAdapter {
  readonly name: BackendName;
  readonly title: string;
  /** Starts (or finds) what the backend needs; throws `BackendUnavailable` to be left out with a reason. */
  setup(ctx: BackendContext): Promise<BackendInstance>;
}

/** The backend cannot run here (package not landed, server missing): it is left out with this reason. */
export class BackendUnavailable extends Error {
  override name = 'BackendUnavailable';
}
