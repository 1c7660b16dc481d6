import type { ExitCode } from './exit-codes.js';

/**
 * An error the CLI reports as one line on stderr and exits with `exitCode`, without a stack: bad
 * usage, a missing backend package, a run in the wrong status. Thrown before anything is changed.
 */
export class CliError extends Error {
  /** The process exit code this error ends the command with. */
  readonly exitCode: ExitCode;

  constructor(exitCode: ExitCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
