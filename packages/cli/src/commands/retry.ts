import type { CliCommand } from '../command.js';
import { safeText } from '../render/safe-text.js';

/** `cairn retry <run-id>`: resumes a failed or cancelled run from where it stopped. */
export const retryCommand: CliCommand = {
  name: 'retry',
  register(program, cli) {
    program
      .command('retry')
      .description(
        'Resume a failed or cancelled run from where it stopped: its succeeded steps are kept, the steps that failed run again (engine.retryRun). A worker of the application executes it.',
      )
      .argument('<run-id>', 'the run')
      .option('-r, --reason <text>', "why: kept in the run's retry record")
      .action(async (runId: string, options: { reason?: string }) => {
        await cli.withConnection(async ({ engine }) => {
          const run = await engine.retryRun(runId, options.reason === undefined ? {} : { reason: options.reason });
          const record = run.retries?.at(-1);
          const forgotten = record?.forgottenSteps ?? [];
          cli.print(`Run ${run.id} reopened${record ? ` from ${record.previousStatus}` : ''} (status now ${run.status}).`);
          cli.print(
            forgotten.length === 0 ? 'No step record was forgotten.' : `Runs again: ${forgotten.map((key) => JSON.stringify(safeText(key))).join(', ')}.`,
          );
          if (record?.retriedChildren?.length) cli.print(`Children retried with it: ${record.retriedChildren.join(', ')}.`);
        });
      });
  },
};
