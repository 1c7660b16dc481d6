import { Option } from 'commander';
import type { RunQuery, RunStatus } from '@cairn/core';
import type { CliCommand } from '../command.js';
import { intIn, parseStatuses, parseTagOption, parseTime } from '../parse-options.js';
import { renderRunsTable } from '../render/runs-table.js';

interface RunsOptions {
  workflow?: string;
  status?: RunStatus[];
  since?: number;
  until?: number;
  parent?: string;
  key?: string;
  tag?: Record<string, string>;
  limit: number;
  cursor?: string;
  json?: boolean;
}

/** `cairn runs`: lists runs newest first, filtered and paged. */
export const runsCommand: CliCommand = {
  name: 'runs',
  register(program, cli) {
    program
      .command('runs')
      .description('List runs, newest first.')
      .option('-w, --workflow <name>', 'only runs of this workflow')
      .addOption(
        new Option(
          '-s, --status <status>',
          'only runs in this status (pending, running, waiting, completed, failed, cancelled); comma-separated or repeated',
        ).argParser(parseStatuses),
      )
      .addOption(
        new Option('--since <time>', 'only runs created at or after: an ISO date or a duration ago (30m, 2h, 7d)').argParser((v: string) => parseTime(v)),
      )
      .addOption(new Option('--until <time>', 'only runs created before: an ISO date or a duration ago').argParser((v: string) => parseTime(v)))
      .option('--parent <run-id>', 'only children of this run')
      .option('--key <idempotency-key>', 'only the run started with this idempotency key')
      .addOption(new Option('-t, --tag <key=value>', 'only runs with this tag; repeated: runs with all of them').argParser(parseTagOption))
      .addOption(new Option('-n, --limit <n>', 'runs per page, 1..1000').default(20).argParser(intIn(1, 1000)))
      .option('--cursor <cursor>', 'the next page: the cursor printed after the previous one')
      .option('--json', 'print { runs, nextCursor } as JSON')
      .addHelpText(
        'after',
        '\nExamples:\n  cairn runs --status failed --since 1d\n  cairn runs --tag customer=c-42 --tag plan=pro\n  cairn runs --workflow order --limit 50 --json',
      )
      .action(async (options: RunsOptions) => {
        const query: RunQuery & { parentRunId?: string; idempotencyKey?: string } = { limit: options.limit };
        if (options.workflow !== undefined) query.workflow = options.workflow;
        if (options.status !== undefined) query.status = options.status.length === 1 ? (options.status[0] as RunStatus) : options.status;
        if (options.since !== undefined) query.createdAfter = options.since;
        if (options.until !== undefined) query.createdBefore = options.until;
        if (options.parent !== undefined) query.parentRunId = options.parent;
        if (options.key !== undefined) query.idempotencyKey = options.key;
        if (options.tag !== undefined) query.tags = options.tag;
        if (options.cursor !== undefined) query.cursor = options.cursor;
        const page = await cli.withConnection(({ engine }) => engine.listRuns(query as RunQuery));
        if (options.json) {
          cli.printJson({ runs: page.runs, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) });
          return;
        }
        cli.print(renderRunsTable(page.runs, { colors: cli.colors() }));
        if (page.nextCursor !== undefined) cli.print(cli.colors().dim(`more: --cursor ${page.nextCursor}`));
      });
  },
};
