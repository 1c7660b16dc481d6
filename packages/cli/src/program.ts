import { Command, Option } from 'commander';
import type { CliContext } from './cli-context.js';
import { COMMANDS } from './commands/index.js';

const DESCRIPTION = `Operate Cairn workflow runs: list, inspect, cancel, retry, fork, delete, prune;
check a candidate build against the runs in flight before a deploy; export a run's history.

Connect with --url (postgres://, mysql://, mariadb://, sqlite:<path>, redis://,
mongodb://host/db), --config <file>, or a cairn.config.ts / .js in this
directory that exports { store, workflows?, queue? }.

Exit codes: 0 ok, 1 failure (store unreachable, unexpected error), 2 bad usage
(nothing changed), 3 run (or step) not found, 4 refused by the run's status
(nothing changed), 5 doctor found problems. cairn check exits 1 when a run
would not resume on the candidate build.`;

/** The `cairn` program: the global options and every command of `COMMANDS`. */
export function createProgram(cli: CliContext, version: string): Command {
  const program = new Command('cairn')
    .description(DESCRIPTION)
    .version(version, '-v, --version', 'print the version of @cairn/cli')
    .addOption(new Option('--url <url>', 'the store to connect to (postgres://, mysql://, sqlite:<path>, redis://, mongodb://)').env('CAIRN_URL'))
    .option('--config <file>', 'a config file exporting { store, workflows?, queue? } (default: ./cairn.config.ts or .js)')
    .option('--prefix <prefix>', "table, key or collection prefix of the store (default: the backend's, cairn_)")
    .option('--no-color', 'never colour the output (also: NO_COLOR=1)')
    .showHelpAfterError('(run with --help for usage)')
    .helpCommand(true)
    .configureOutput({
      writeOut: (text) => cli.io.stdout.write(text),
      writeErr: (text) => cli.io.stderr.write(text),
    })
    .exitOverride();
  program.hook('preAction', (_program, action) => cli.useOptions(action.optsWithGlobals()));
  for (const command of COMMANDS) command.register(program, cli);
  // Every subcommand reports usage errors the same way and never calls process.exit itself.
  for (const sub of program.commands) sub.exitOverride().showHelpAfterError('(run with --help for usage)').configureOutput(program.configureOutput());
  return program;
}
