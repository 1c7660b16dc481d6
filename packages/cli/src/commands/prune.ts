import { Option } from 'commander';
import type { RunStatus } from '@cairn/core';
import type { CliCommand } from '../command.js';
import { intIn, parseStatuses, parseTime } from '../parse-options.js';
import { formatTime } from '../render/format.js';

/** `cairn prune --before <time>`: deletes runs that ended before a time. */
export const pruneCommand: CliCommand = {
  name: 'prune',
  register(program, cli) {
    program
      .command('prune')
      .description(
        'Delete runs that ended (completed, failed or cancelled) before a time, with everything they recorded; their idempotency keys are freed (engine.prune).',
      )
      .addOption(
        new Option('--before <time>', 'delete runs that ended before: an ISO date or a duration ago (30d: ended more than 30 days ago)')
          .argParser((v: string) => parseTime(v))
          .makeOptionMandatory(),
      )
      .addOption(
        new Option(
          '-s, --status <status>',
          'only runs in this terminal status (completed, failed, cancelled); comma-separated or repeated (default: all three)',
        ).argParser(parseStatuses),
      )
      .addOption(new Option('-n, --limit <n>', 'delete at most this many').argParser(intIn(1, 1_000_000)))
      .addHelpText('after', '\nExamples:\n  cairn prune --before 30d --status completed\n  cairn prune --before 2026-01-01')
      .action(async (options: { before: number; status?: RunStatus[]; limit?: number }) => {
        await cli.withConnection(async ({ engine }) => {
          const { deleted } = await engine.prune({
            before: options.before,
            ...(options.status === undefined ? {} : { statuses: options.status }),
            ...(options.limit === undefined ? {} : { limit: options.limit }),
          });
          cli.print(
            `Deleted ${deleted} run${deleted === 1 ? '' : 's'} that ended before ${formatTime(options.before)} (${(options.status ?? ['completed', 'failed', 'cancelled']).join(', ')}).`,
          );
        });
      });
  },
};
