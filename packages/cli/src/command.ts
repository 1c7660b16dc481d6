import type { Command } from 'commander';
import type { CliContext } from './cli-context.js';

/**
 * One `cairn` command. A command is one file under `src/commands/` exporting one of these, listed
 * once in `src/commands/index.ts`: `register` adds it (its arguments, options, help and action) to
 * the program. Actions throw a `CliError` for an outcome with its own exit code; anything else
 * thrown is mapped by `runCli` (see `exitCodeOf`).
 */
export interface CliCommand {
  /** The command's name, as typed (`runs`, `show`). */
  readonly name: string;
  register(program: Command, cli: CliContext): void;
}
