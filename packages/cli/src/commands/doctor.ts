import { Option } from 'commander';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { intIn } from '../parse-options.js';
import { renderDoctorReport } from '../render/doctor-report.js';

interface DoctorCommandOptions {
  fix?: boolean;
  json?: boolean;
  limit?: number;
}

/**
 * `cairn doctor [--fix] [--json]`: finds what is stuck or inconsistent in the store and says what
 * it means (`engine.doctor`). Exit 0 when nothing remains (nothing found, or everything found was
 * fixed), `EXIT.problems` (5) when findings remain, 1 when the check itself failed.
 */
export const doctorCommand: CliCommand = {
  name: 'doctor',
  register(program, cli) {
    program
      .command('doctor')
      .description(
        'Find runs that are stuck (expired leases nobody took over, due runs never dispatched, queued steps never started, parents never woken, versions no engine registered, waits nothing can end) and backend drift; say what each means.',
      )
      .option('--fix', 'repair what is safe to repair (dispatch a stuck run or step, wake a parent, repair index drift) and report each repair')
      .option('--json', 'print the report as JSON')
      .addOption(new Option('-n, --limit <n>', 'most runs read per check, 1..100000 (default 1000; a capped read is reported)').argParser(intIn(1, 100_000)))
      .addHelpText(
        'after',
        [
          '',
          'Exit codes: 0 nothing remains (nothing found, or all fixed), 5 problems remain,',
          '1 the check failed, 2 bad usage.',
          '',
          '--fix dispatches stuck runs through the queue your cairn.config.ts exports;',
          'with --url alone no worker would get a job, so only store repairs are made',
          '(waking a parent, backend index drift) and the rest say why.',
          '',
          'Examples:',
          '  cairn doctor',
          '  cairn doctor --fix --json',
        ].join('\n'),
      )
      .action(async (options: DoctorCommandOptions) => {
        const { report, store } = await cli.withConnection(async ({ engine, store }) => ({
          report: await engine.doctor({ fix: options.fix === true, ...(options.limit === undefined ? {} : { limits: { runs: options.limit } }) }),
          store: store.name,
        }));
        if (options.json) cli.printJson(report);
        else cli.print(renderDoctorReport(report, { colors: cli.colors(), width: cli.width(), store }));
        if (report.remaining > 0)
          throw new CliError(EXIT.problems, `${report.remaining} problem${report.remaining === 1 ? '' : 's'} remain${report.remaining === 1 ? 's' : ''}`);
      });
  },
};
