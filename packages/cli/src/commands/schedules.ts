import { CairnError } from '@cairn/core';
import type { ScheduleRecord } from '@cairn/core/backend';
import { Option, type Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { formatTime } from '../render/format.js';
import { intIn } from '../parse-options.js';
import { safeText } from '../render/safe-text.js';
import { textTable } from '../render/text-table.js';

const state = (s: ScheduleRecord) => (s.paused ? 'paused' : 'active');

function renderSchedules(list: readonly ScheduleRecord[]): string {
  if (list.length === 0) return 'No schedules.';
  const rows = list.map((s) => [
    safeText(s.name),
    safeText(s.workflow),
    `${safeText(s.cron)} ${safeText(s.timezone)}`,
    state(s),
    s.paused ? '-' : formatTime(s.nextTickAt),
    s.lastRunId === null ? '-' : safeText(s.lastRunId),
    String(s.skippedTicks),
  ]);
  return textTable(['NAME', 'WORKFLOW', 'CRON / ZONE', 'STATE', 'NEXT TICK', 'LAST RUN', 'SKIPPED'], rows);
}

/** Runs `fn` on the named schedule's engine call, mapping an unknown name to exit 3. */
async function onSchedule<T>(
  cli: CliContext,
  name: string,
  fn: (engine: Parameters<Parameters<CliContext['withConnection']>[0]>[0]['engine']) => Promise<T>,
): Promise<T> {
  return cli.withConnection(async ({ engine }) =>
    fn(engine).catch((error: unknown) => {
      if (CairnError.is(error, 'SCHEDULE_NOT_FOUND')) throw new CliError(EXIT.notFound, `Schedule ${safeText(name)} not found`);
      throw error;
    }),
  );
}

/** `cairn schedules [list|pause|resume|trigger|delete]`: the store's schedules. */
export const schedulesCommand: CliCommand = {
  name: 'schedules',
  register(program, cli) {
    const schedules: Command = program
      .command('schedules')
      .description('List, pause, resume, trigger or delete schedules (cron-started workflows). Without a subcommand: list.')
      .addHelpText('after', '\nExamples:\n  cairn schedules\n  cairn schedules pause nightly-report\n  cairn schedules trigger nightly-report --json');
    const list = async (options: { limit: number; after?: string; json?: boolean }) => {
      const found = await cli.withConnection(({ engine }) =>
        engine.schedules.list(options.after === undefined ? { limit: options.limit } : { limit: options.limit, after: options.after }),
      );
      if (options.json) cli.printJson({ schedules: found });
      else cli.print(renderSchedules(found));
    };
    // The default subcommand: `cairn schedules` lists (options belong to it, not to the parent,
    // so `--json` after another subcommand reaches that one).
    schedules
      .command('list', { isDefault: true })
      .description('List schedules by name (the default).')
      .addOption(new Option('-n, --limit <n>', 'schedules per page, 1..1000').default(100).argParser(intIn(1, 1000)))
      .option('--after <name>', 'the next page: names after this one')
      .option('--json', 'print { schedules } as JSON')
      .action(list);
    for (const [verb, description] of [
      ['pause', 'Stop new ticks (ticks already decided still start).'],
      ['resume', 'Tick again from the first tick after now (paused time is not caught up).'],
    ] as const) {
      schedules
        .command(verb)
        .description(description)
        .argument('<name>', 'the schedule')
        .action(async (name: string) => {
          const s = await onSchedule(cli, name, (engine) => engine.schedules[verb](name));
          cli.print(`Schedule ${safeText(s.name)} ${state(s)}${s.paused ? '' : `, next tick ${formatTime(s.nextTickAt)}`}.`);
        });
    }
    schedules
      .command('trigger')
      .description(
        "Start one run now, whatever the overlap policy. Without the workflow's code (a --url connection) the run is recorded and a worker starts it at its next pass.",
      )
      .argument('<name>', 'the schedule')
      .option('--json', 'print { key, runId? } as JSON')
      .action(async (name: string, options: { json?: boolean }) => {
        const fired = await onSchedule(cli, name, (engine) => engine.schedules.trigger(name));
        if (options.json) cli.printJson(fired);
        else if (fired.runId !== undefined) cli.print(`Schedule ${safeText(name)} triggered: run ${safeText(fired.runId)}.`);
        else cli.print(`Schedule ${safeText(name)} triggered: a worker will start the run with key ${safeText(fired.key)}.`);
      });
    schedules
      .command('delete')
      .description('Delete a schedule (its runs stay). One declared in code comes back when an engine with it starts.')
      .argument('<name>', 'the schedule')
      .action(async (name: string) => {
        const deleted = await cli.withConnection(({ engine }) => engine.schedules.delete(name));
        if (!deleted) throw new CliError(EXIT.notFound, `Schedule ${safeText(name)} not found`);
        cli.print(`Schedule ${safeText(name)} deleted.`);
      });
  },
};
