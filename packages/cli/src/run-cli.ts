import { readFileSync } from 'node:fs';
import { CommanderError } from 'commander';
import { CairnError } from '@cairn/core';
import { createCliContext, type CliIo } from './cli-context.js';
import { CliError } from './cli-error.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { createProgram } from './program.js';
import { safeText } from './render/safe-text.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The exit code of an error a command threw (see `EXIT`). */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (CairnError.is(error, 'INVALID_INPUT') || CairnError.is(error, 'TAG_LIMIT')) return EXIT.usage;
  if (CairnError.is(error, 'RUN_NOT_FOUND') || CairnError.is(error, 'STEP_NOT_FOUND') || CairnError.is(error, 'STREAM_NOT_FOUND')) return EXIT.notFound;
  if (CairnError.is(error, 'STREAM_RANGE')) return EXIT.usage;
  if (CairnError.is(error, 'BULK_NOT_FOUND')) return EXIT.notFound;
  if (CairnError.is(error, 'BULK_BUSY') || CairnError.is(error, 'BULK_UNSUPPORTED') || CairnError.is(error, 'TAGS_UNSUPPORTED')) return EXIT.refused;
  if (CairnError.is(error, 'RUN_ACTIVE') || CairnError.is(error, 'RUN_CONFLICT') || CairnError.is(error, 'VERSION_RETIRED')) return EXIT.refused;
  return EXIT.failure;
}

/**
 * Runs `cairn` with `argv` (the arguments after the program name) and resolves with its exit code;
 * never calls `process.exit`. Errors are reported on `io.stderr` as one line (with the error code
 * and cause for unexpected ones), escaped like all output.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const cli = createCliContext(io);
  const program = createProgram(cli, VERSION);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    const code = exitCodeOf(error);
    // Commander printed its own message (and help) already.
    if (error instanceof CommanderError) return code;
    const message = error instanceof Error ? error.message : String(error);
    const prefix = error instanceof CliError ? 'error' : CairnError.is(error) ? `error ${(error as CairnError).code}` : 'error';
    io.stderr.write(`${prefix}: ${safeText(message).replaceAll('\\n', '\n  ')}\n`);
    const cause = (error as { cause?: unknown })?.cause;
    if (code === EXIT.failure && cause instanceof Error) io.stderr.write(`  caused by: ${safeText(cause.message)}\n`);
    return code;
  }
}
