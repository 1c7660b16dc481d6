/** The server kinds the test harness can provide. `mysql` speaks the MySQL protocol (MariaDB locally). */
export type ServiceName = 'postgres' | 'mysql' | 'mongodb' | 'redis';

export const SERVICE_NAMES: readonly ServiceName[] = ['postgres', 'mysql', 'mongodb', 'redis'];

/** Where a server came from: an explicit URL, a Testcontainers container, or a local binary we started. */
export type ServiceSource = 'env' | 'testcontainers' | 'local';

/** A server the tests can use. */
export interface RunningService {
  readonly skipped: false;
  readonly name: ServiceName;
  /** Connection URL (postgres://, mysql://, mongodb://, redis://). */
  readonly url: string;
  readonly source: ServiceSource;
  /** Human-readable detail: server product and version, data directory or image, startup time. */
  readonly detail: string;
  /** Server version as reported by the server, when known (`15.14`, `10.11.14-MariaDB`, ...). */
  readonly version?: string | undefined;
  /** The image the container was started from (Testcontainers only). */
  readonly image?: string | undefined;
  /** PID of the server process (local servers only). */
  readonly pid?: number | undefined;
  /** Temporary directory holding the server's data and log (local servers only); removed by stop(). */
  readonly dir?: string | undefined;
  /** Stops the server if this provider started it (no-op for `env`), and removes its temp dir. Idempotent. */
  stop(): Promise<void>;
  /**
   * Local PostgreSQL, MariaDB and Redis only: stops the server the way a restart does (PostgreSQL:
   * fast shutdown, SIGINT; MariaDB: SIGTERM; Redis: `SHUTDOWN SAVE`) and waits for it to exit,
   * keeping its port and data. Clients see the outage as they would in production.
   */
  halt?(): Promise<void>;
  /** Starts a halted server again on the same port and data, and resolves once it answers. */
  resume?(): Promise<void>;
}

/** No server could be had; tests for this backend should be skipped with `reason`. */
export interface SkippedService {
  readonly skipped: true;
  readonly name: ServiceName;
  readonly reason: string;
}

export type ServiceResult = RunningService | SkippedService;

/**
 * Which sources the provider may use (`CAIRN_TEST_PROVIDER`): `auto` tries an env URL, then
 * Testcontainers, then a local server; `testcontainers` and `local` use that source only, so that
 * a run meant to test it cannot quietly fall back to another one.
 */
export type ProviderMode = 'auto' | 'testcontainers' | 'local';

/**
 * Options for the provider. Everything defaults to the process environment, so tests can run the
 * provider against a controlled world (an empty binary directory, a fake env, no Testcontainers).
 */
export interface ServiceOptions {
  /** Environment to read `CAIRN_TEST_*` variables from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv | undefined;
  /**
   * Which sources to use. Default: `CAIRN_TEST_PROVIDER`, else `auto`. With `testcontainers`, env
   * URLs and local servers are not used, and the runtime is probed even when none is configured;
   * with `local`, env URLs and Testcontainers are not used (no container runtime is even probed).
   * A backend the chosen source cannot provide is skipped, or fails under `CAIRN_TEST_REQUIRE`.
   */
  provider?: ProviderMode | undefined;
  /**
   * Whether to try Testcontainers: `'auto'` probes for a container runtime (default, unless
   * `CAIRN_TEST_TESTCONTAINERS=0`), `false` never tries it, `true` tries it without the env switch.
   */
  testcontainers?: boolean | 'auto' | undefined;
  /** Timeout for the container-runtime probe. Default 2000 ms (`CAIRN_TEST_CONTAINER_PROBE_MS`). */
  probeTimeoutMs?: number | undefined;
  /** Whether to start a locally installed server. Default true (`CAIRN_TEST_LOCAL=0` disables). */
  local?: boolean | undefined;
  /**
   * Only look for local server binaries in this directory (default: `CAIRN_TEST_LOCAL_BIN_DIR`, else
   * the usual system locations). Point it at an empty directory to make local servers unavailable.
   */
  localBinDir?: string | undefined;
  /** FerretDB runner binary. Default: `CAIRN_FERRETDB_BIN`, else `tools/ferretdb-runner/ferretdb-runner` in the repo. */
  ferretdbBin?: string | undefined;
  /** How long a local server or container may take to become ready. Default 60000 ms (`CAIRN_TEST_START_TIMEOUT_MS`). */
  startTimeoutMs?: number | undefined;
  /** Parent directory for temp dirs. Default `os.tmpdir()`. */
  tmpDir?: string | undefined;
  /** Where progress and skip reasons are printed. Default: a line on stderr. Pass `() => {}` to silence. */
  log?: ((line: string) => void) | undefined;
}

/** Raised when `CAIRN_TEST_REQUIRE` names a backend that could not be provided. */
export class ServiceUnavailableError extends Error {
  readonly service: ServiceName;
  constructor(service: ServiceName, message: string) {
    super(message);
    this.name = 'ServiceUnavailableError';
    this.service = service;
  }
}
