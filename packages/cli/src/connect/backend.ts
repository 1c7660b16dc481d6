import type { WorkflowStore } from '@cairn/core/backend';
import { CliError } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';

/** Options every backend takes from the command line. */
export interface BackendOptions {
  /** Table, key or collection prefix (`--prefix`); each backend's own default when absent. */
  prefix?: string;
}

/** A store the CLI opens from a `--url`: the schemes it answers and how to open it. */
export interface UrlBackend {
  /** What it is, for messages (`PostgreSQL`). */
  title: string;
  /** URL schemes, with the colon (`postgres:`). */
  schemes: readonly string[];
  /** The packages a user installs to use it (`@cairn/kysely pg`). */
  packages: string;
  /**
   * Opens the store without changing its schema (no migrations: a command line that reads runs must
   * not create tables). Loads the backend's packages with dynamic `import()`, so only the backend in
   * use needs to be installed.
   */
  open(url: string, options: BackendOptions): Promise<WorkflowStore>;
}

/**
 * `import(specifier)` for an optional peer dependency: a missing package becomes a `CliError`
 * (usage) naming what to install, instead of a stack trace.
 */
export async function importBackend<T>(backend: Pick<UrlBackend, 'title' | 'packages'>, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new CliError(EXIT.usage, `The ${backend.title} backend is not installed: npm i ${backend.packages}\n(${(error as Error).message.split('\n')[0]})`, {
        cause: error,
      });
    }
    throw error;
  }
}
