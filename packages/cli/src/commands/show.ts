import type { CliCommand } from '../command.js';
import { renderTimeline } from '../render/timeline-view.js';

/** `cairn show <run-id>`: a run's timeline. */
export const showCommand: CliCommand = {
  name: 'show',
  register(program, cli) {
    program
      .command('show')
      .description("Show a run's timeline: its status, times, error and state, then every step with its attempts, durations and a bar chart.")
      .argument('<run-id>', 'the run')
      .option('--json', 'print the timeline as JSON (engine.timeline)')
      .action(async (runId: string, options: { json?: boolean }) => {
        const timeline = await cli.withConnection(({ engine }) => engine.timeline(runId));
        if (options.json) cli.printJson(timeline);
        else cli.print(renderTimeline(timeline, { colors: cli.colors(), width: cli.width(), cwd: cli.io.cwd }));
      });
  },
};
