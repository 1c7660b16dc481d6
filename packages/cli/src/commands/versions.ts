import { Option, type Command } from 'commander';
import { CairnError } from '@cairn/core';
import type { VersionStatus } from '@cairn/core/backend';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { intIn } from '../parse-options.js';
import { safeText } from '../render/safe-text.js';
import { renderVersions } from '../render/versions-table.js';

/** `cairn versions [list|retire|activate]`: the workflow versions engines registered on the store, and their runs in flight. */
export const versionsCommand: CliCommand = {
  name: 'versions',
  register(program, cli) {
    const versions: Command = program
      .command('versions')
      .description(
        "List workflows' versions with their status and runs in flight, or retire / reactivate one (a retired version takes no new runs; its runs in flight go on). Without a subcommand: list.",
      )
      .addHelpText('after', '\nExamples:\n  cairn versions billing orders\n  cairn versions retire billing v1\n  cairn versions activate billing v1');
    versions
      .command('list', { isDefault: true })
      .description(
        'List the versions of each workflow, oldest registration first, with their status, runs in flight (pending, running, waiting) and the oldest of them (the default).',
      )
      .argument('<workflow...>', 'the workflow names')
      .addOption(
        new Option('--max-runs <n>', 'most runs in flight read per workflow, newest first, 1..100000 (default 10000; a capped read is reported)').argParser(
          intIn(1, 100_000),
        ),
      )
      .option('--json', 'print { versions, truncated } as JSON')
      .action(async (workflows: string[], options: { json?: boolean; maxRuns?: number }) => {
        const summaries = await cli.withConnection(async ({ engine }) => {
          const out = [];
          for (const workflow of workflows)
            out.push(await engine.versions.summary(workflow, options.maxRuns === undefined ? {} : { maxRuns: options.maxRuns }));
          return out;
        });
        if (!options.json) {
          cli.print(renderVersions(summaries, { colors: cli.colors() }));
          return;
        }
        cli.printJson({
          versions: summaries.flatMap((s) =>
            s.versions.map((v) => ({
              ...v,
              oldestInFlight: v.oldestInFlight === null ? null : { ...v.oldestInFlight, ageMs: s.readAt - v.oldestInFlight.createdAt },
            })),
          ),
          truncated: summaries.filter((s) => s.truncated).map((s) => s.workflow),
        });
      });
    for (const [verb, status, description] of [
      [
        'retire',
        'retired',
        'Mark a version retired: it takes no new runs (startRun, forks, schedules go to the newest active version). Its runs in flight go on.',
      ],
      ['activate', 'active', 'Mark a retired version active again.'],
    ] as const satisfies readonly (readonly [string, VersionStatus, string])[]) {
      versions
        .command(verb)
        .description(description)
        .argument('<workflow>', 'the workflow name')
        .argument('<version>', 'the version')
        .action(async (workflow: string, version: string) => {
          const record = await cli.withConnection(({ engine }) =>
            engine.versions.setStatus(workflow, version, status).catch((error: unknown) => {
              if (CairnError.is(error, 'VERSION_NOT_FOUND'))
                throw new CliError(EXIT.notFound, `Version ${safeText(version)} of ${safeText(workflow)} is not registered`);
              throw error;
            }),
          );
          cli.print(`Version ${safeText(record.version)} of ${safeText(record.workflow)} ${record.status}.`);
        });
    }
  },
};
