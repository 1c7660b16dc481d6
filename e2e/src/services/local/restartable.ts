/**
 * Stopping a started local server and starting it again on the same port and data directory, so
 * tests can put clients through a real server restart (an outage of a few seconds).
 */
import { waitReady } from './common.js';
import { spawnManaged, type ManagedProcess, type SpawnManagedOptions } from './process.js';

/** A local server that can be halted and started again; `stop()` ends it for good. */
export interface RestartableServer {
  /** The server process running now (a new one after each `resume()`). */
  current(): ManagedProcess;
  /**
   * Stops the server (its graceful stop: a fast shutdown for PostgreSQL, SIGTERM for MariaDB,
   * `SHUTDOWN SAVE` for Redis) and waits for it to exit. Its port and data directory are kept.
   */
  halt(): Promise<void>;
  /** Starts the halted server again on the same port and data, and waits until it answers. */
  resume(): Promise<void>;
  /** Stops the server for good and removes its temp dir (also when halted). Idempotent. */
  stop(): Promise<void>;
}

export interface RestartableOptions {
  label: string;
  port: number;
  /** The spawn options the server was first started with. */
  spawn: SpawnManagedOptions;
  timeoutMs: number;
  /** One readiness attempt; throws until the server answers. */
  probe(port: number, proc: ManagedProcess): Promise<unknown>;
  /** Runs before the stop signal, e.g. to make Redis save its data (`SHUTDOWN SAVE`). */
  beforeHalt?(port: number): Promise<void>;
}

export function restartable(first: ManagedProcess, o: RestartableOptions): RestartableServer {
  let proc = first;
  let halted = false;
  let stopped: Promise<void> | undefined;
  return {
    current: () => proc,
    async halt() {
      if (halted || stopped) return;
      halted = true;
      await o.beforeHalt?.(o.port).catch(() => undefined);
      await proc.halt();
    },
    async resume() {
      if (!halted || stopped) return;
      proc = spawnManaged(o.spawn);
      halted = false;
      await waitReady(`${o.label} (pid ${proc.pid}, port ${o.port}, restarted)`, proc, o.timeoutMs, () => o.probe(o.port, proc));
    },
    stop() {
      // A halted process has already exited: stop() then only removes the temp dir.
      stopped ??= proc.stop();
      return stopped;
    },
  };
}
