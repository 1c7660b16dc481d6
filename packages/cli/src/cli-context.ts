import { type Colors, colorEnabled, colors } from './render/colors.js';
import { connect, type Connection, type ConnectOptions } from './connect/connection.js';
import { safeJson } from './render/safe-text.js';

/** Where the CLI writes and what it knows of its terminal; a test passes its own. */
export interface CliIo {
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** The global options every command accepts. */
export interface GlobalOptions extends ConnectOptions {
  /** `--no-color` sets it to false. */
  color?: boolean;
}

/** What a command's action gets: output helpers and the connection to the store. */
export interface CliContext {
  readonly io: CliIo;
  /** Colour functions, on only for a terminal (see `colorEnabled`). */
  colors(): Colors;
  /** The terminal width to fit (its columns, 80 when not a terminal). */
  width(): number;
  /** Writes a line (or lines) to stdout. */
  print(text: string): void;
  /** Writes `value` as JSON to stdout, escaped so that no control character reaches a terminal. */
  printJson(value: unknown): void;
  /** Writes a line to stderr. */
  warn(text: string): void;
  /** Takes the global options of the command about to run (the program's preAction hook calls it). */
  useOptions(options: GlobalOptions): void;
  /**
   * Opens the store from the global options (`--url`, `--config`, or `cairn.config.*`), runs
   * `fn` with it, and closes it, also when `fn` throws.
   */
  withConnection<T>(fn: (connection: Connection) => Promise<T>): Promise<T>;
}

/** Builds the context the commands share. */
export function createCliContext(io: CliIo): CliContext {
  let globals: GlobalOptions = {};
  return {
    io,
    colors: () => colors(colorEnabled(io.env, io.stdout.isTTY === true, globals.color)),
    width: () => (io.stdout.isTTY && io.stdout.columns ? io.stdout.columns : 80),
    print: (text) => io.stdout.write(`${text}\n`),
    printJson: (value) => io.stdout.write(`${safeJson(value)}\n`),
    warn: (text) => io.stderr.write(`${text}\n`),
    useOptions(options) {
      globals = options;
    },
    async withConnection(fn) {
      const connection = await connect(globals, io.cwd);
      try {
        return await fn(connection);
      } finally {
        await connection.close();
      }
    },
  };
}
