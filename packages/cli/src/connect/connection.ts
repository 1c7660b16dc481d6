import { createEngine, type Engine } from '@cairn/core';
import { codecStore, type WorkflowStore } from '@cairn/core/backend';
import { CliError } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';
import { findConfig, loadConfig } from './load-config.js';
import { openUrl } from './open-url.js';

/** Where the store comes from: the global options of every command. */
export interface ConnectOptions {
  url?: string;
  config?: string;
  prefix?: string;
}

/** An open store and an engine over it (no workers, no recovery loop: the CLI is a client). */
export interface Connection {
  /** The store, seen through the config's payload codec when it has one. */
  store: WorkflowStore;
  engine: Engine;
  /** Stops the engine and closes the store. */
  close(): Promise<void>;
}

/**
 * Opens the store named by `--url`, else by `--config`, else by a `cairn.config.*` in `cwd`, and an
 * engine over it. The engine registers nothing and starts no worker: commands read and write runs
 * through it, and a run they wake (cancel, retry) is executed by the application's own workers.
 */
export async function connect(options: ConnectOptions, cwd: string): Promise<Connection> {
  if (options.url !== undefined && options.config !== undefined) throw new CliError(EXIT.usage, 'Pass either --url or --config, not both');
  let store: WorkflowStore;
  let engine: Engine;
  if (options.url !== undefined) {
    store = await openUrl(options.url, options.prefix === undefined ? {} : { prefix: options.prefix });
    engine = createEngine({ store, workflows: [], logger: quietLogger });
  } else {
    const path = findConfig(cwd, options.config);
    if (path === undefined)
      throw new CliError(EXIT.usage, 'No store: pass --url <url> or --config <file>, or add a cairn.config.ts to this directory (see cairn --help)');
    const config = await loadConfig(path);
    // With the application's codec, every command (and the dashboard) reads payloads decoded.
    store = config.codec === undefined ? config.store : codecStore(config.store, config.codec);
    engine = createEngine({ store, workflows: config.workflows, ...(config.queue === undefined ? {} : { queue: config.queue }), logger: quietLogger });
  }
  return {
    store,
    engine,
    async close() {
      await engine.stop({ graceMs: 0 }).catch(() => undefined);
      await store.close();
    },
  };
}

// The CLI reports failures itself; the engine's background log lines would only repeat them.
const quietLogger = { warn: () => {}, error: () => {} };
