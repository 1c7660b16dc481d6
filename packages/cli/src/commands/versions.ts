import { CairnError, type VersionRecord, type VersionStatus } from '@cairn/core';
import type { Command } from 'commander';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { formatTime } from '../render/format.js';
import { safeText } from '../render/safe-text.js';
import { textTable } from '../render/text-table.js';

function renderVersions(workflow: string, list: readonly VersionRecord[]): string {
  if (list.length === 0) return `No registered versions of ${safeText(workflow)}.`;
  const rows = list.map((v) => [safeText(v.version), v.status, formatTime(v.createdAt), formatTime(v.updatedAt)]);
  return textTable(['VERSION', 'STATUS', 'FIRST REGISTERED', 'LAST CHANGED'], rows);
}

/** `cairn versions [list|retire|activate]`: the workflow versions engines registered on the store. */
export const versionsCommand: CliCommand = {
  name: 'versions',
  register(program, cli) {
    const versions: Command = program
      .command('versions')
      .description(
        "List a workflow's registered versions, or retire / reactivate one (a fork made here runs on the newest active version). Without a subcommand: list.",
      )
      .addHelpText('after', '\nExamples:\n  cairn versions billing\n  cairn versions retire billing v1\n  cairn versions activate billing v1');
    versions
      .command('list', { isDefault: true })
      .description('List the versions of a workflow, oldest first (the default).')
      .argument('<workflow>', 'the workflow name')
      .option('--json', 'print { versions } as JSON')
      .action(async (workflow: string, options: { json?: boolean }) => {
        const found = await cli.withConnection(({ engine }) => engine.versions.list(workflow));
        if (options.json) cli.printJson({ versions: found });
        else cli.print(renderVersions(workflow, found));
      });
    for (const [verb, status, description] of [
      ['retire', 'retired', 'Mark a version retired: forks made without the workflow code stop choosing it. Its runs go on.'],
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
