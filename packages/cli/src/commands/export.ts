import { existsSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { exportRun } from '@cairn/core/backend';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { safeJson, safeText } from '../render/safe-text.js';

/**
 * `cairn export <run-id> [--out file]`: the run's history as a versioned JSON document
 * (`exportRun`, format `cairn.run-history`), which `replayHistory` in `@cairn/core/testing`
 * replays against code: a real run kept in a repository as a regression test.
 */
export const exportCommand: CliCommand = {
  name: 'export',
  register(program, cli) {
    program
      .command('export')
      .description(
        "Write a run's history (the run, its steps, its state) as one versioned JSON document, to replay in tests with replayHistory from @cairn/core/testing.",
      )
      .argument('<run-id>', 'the run')
      .option('-o, --out <file>', 'write the document to this file (replaced if it exists) instead of stdout')
      .addHelpText('after', '\nExamples:\n  cairn export 01J9Z… > run.json\n  cairn export 01J9Z… --out test/histories/signup-1.json')
      .action(async (runId: string, options: { out?: string }) => {
        const out = options.out === undefined ? undefined : resolve(cli.io.cwd, options.out);
        if (out !== undefined && !(existsSync(dirname(out)) && statSync(dirname(out)).isDirectory()))
          throw new CliError(EXIT.usage, `--out ${safeText(options.out as string)}: no such directory ${safeText(dirname(out))}`);
        const doc = await cli.withConnection(({ store }) => exportRun(store, runId));
        if (out === undefined) {
          cli.printJson(doc);
          return;
        }
        await writeFile(out, `${safeJson(doc)}\n`);
        cli.print(`Exported run ${safeText(runId)} (${doc.steps.length} steps) to ${safeText(options.out as string)}.`);
      });
  },
};
