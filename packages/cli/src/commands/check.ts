import { Option } from 'commander';
import { checkRuns, type RunVerdict } from '@cairn/core/backend';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { loadWorkflows } from '../connect/load-workflows.js';
import { EXIT } from '../exit-codes.js';
import { intIn } from '../parse-options.js';
import { CheckTally, renderCheckReport, VERDICT_LABEL, VERDICTS } from '../render/check-report.js';

interface CheckCommandOptions {
  workflows: string;
  recent?: number;
  json?: boolean;
}

/**
 * `cairn check --workflows <module>`: the pre-deploy check (`checkRuns`). Every run in flight of the
 * module's workflows (and the newest `--recent` ended ones) is replayed against the module's code
 * with no side effect; the store is only read. Exit 0 when every run is compatible, 1 when any
 * diverges, is pinned to a version the build lacks or could not be replayed, 2 on bad usage
 * (including a module that does not load, exports no workflow or two of one name and version:
 * then no store is opened).
 */
export const checkCommand: CliCommand = {
  name: 'check',
  register(program, cli) {
    program
      .command('check')
      .description(
        "Before a deploy: replay every run in flight against a candidate build's workflow code, with no side effect (the store is only read), and say which runs would diverge.",
      )
      .requiredOption(
        '--workflows <module>',
        "an ES module (JS, or TS) exporting the candidate build's workflow definitions: named exports and/or a default array",
      )
      .addOption(new Option('--recent <n>', 'also replay the newest n ended runs of each workflow, 0..10000 (default 0)').argParser(intIn(0, 10_000)))
      .option('--json', 'print { checked, runs: [{ runId, workflow, version, status, verdict, divergence?, reason? }] } as JSON')
      .addHelpText(
        'after',
        [
          '',
          'Exit codes: 0 every run is compatible, 1 a run diverges, is pinned to a version the',
          'build does not define or could not be replayed (or the store is unreachable),',
          '2 bad usage (the module does not load, exports no workflow, or two of one version).',
          '',
          'Examples:',
          '  cairn check --url postgres://db/app --workflows dist/workflows.js',
          '  node --import tsx node_modules/.bin/cairn check --workflows src/workflows.ts --recent 20 --json',
        ].join('\n'),
      )
      .action(async (options: CheckCommandOptions) => {
        // The module first: a build that does not load is a usage error with no store opened.
        const workflows = await loadWorkflows(options.workflows, cli.io.cwd);
        const tally = new CheckTally();
        const runs: RunVerdict[] = [];
        await cli.withConnection(async ({ store }) => {
          for await (const verdict of checkRuns({ store, workflows, ...(options.recent === undefined ? {} : { recent: options.recent }) })) {
            tally.add(verdict);
            if (options.json) runs.push(verdict);
          }
        });
        if (options.json) cli.printJson({ checked: tally.checked, runs });
        else cli.print(renderCheckReport(tally, { colors: cli.colors(), workflows: [...new Set(workflows.map((w) => w.name))], cwd: cli.io.cwd }));
        if (tally.unfit > 0) {
          const what = VERDICTS.filter((verdict) => verdict !== 'compatible' && tally.counts[verdict] > 0)
            .map((verdict) => `${tally.counts[verdict]} ${VERDICT_LABEL[verdict]}`)
            .join(', ');
          throw new CliError(EXIT.failure, `${tally.unfit} of ${tally.checked} runs would not resume on this build (${what})`);
        }
      });
  },
};
