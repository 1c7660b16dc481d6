/**
 * What each backend's container file provides. The Testcontainers modules are imported lazily
 * (they are optional peer dependencies), inside `start`.
 */
export interface StartedBackendContainer {
  /** Connection URL through the port published on the host. */
  url: string;
  /** The container id (short), for the log. */
  id: string;
  /** Stops and removes the container. */
  stop(): Promise<void>;
}

/** What a server says it is. */
export interface ServerIdentity {
  /** As the server reports it: `15.14`, `10.11.14-MariaDB-0+deb12u1`, `7.0.15`, `1.24.2`. */
  version: string;
  /** Product and version for humans: `PostgreSQL 15.14`, `FerretDB 1.24.2 (MongoDB 7.0.77 wire protocol)`. */
  label: string;
}

export interface BackendContainer {
  /** Starts a container of `image` and resolves once Testcontainers' wait strategy says it is ready. */
  start(image: string, timeoutMs: number): Promise<StartedBackendContainer>;
  /**
   * Connects to the server for real and returns its version and a label naming product and
   * version (`PostgreSQL 15.14`): the proof that the container serves, and what the log shows.
   */
  describe(url: string): Promise<ServerIdentity>;
}
