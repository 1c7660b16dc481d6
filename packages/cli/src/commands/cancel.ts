import { isTerminalRunStatus } from '@cairn/core';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { safeText } from '../render/safe-text.js';

/** `cairn cancel <run-id>`: requests cancellation of a run that has not ended. */
export const cancelCommand: CliCommand = {
  name: 'cancel',
  register(program, cli) {
    program
      .command('cancel')
      .description(
        'Request cancellation of a run (and its children). A worker running it stops it; a waiting run is ended by the next worker that looks at it.',
      )
      .argument('<run-id>', 'the run')
      .option('-r, --reason <text>', 'why: stored with the run and carried by its CANCELLED error')
      .action(async (runId: string, options: { reason?: string }) => {
        await cli.withConnection(async ({ engine }) => {
          const run = await engine.getRun(runId);
          if (!run) throw new CliError(EXIT.notFound, `Run ${safeText(runId)} not found`);
          if (run.status === 'cancelled') {
            cli.print(`Run ${run.id} is already cancelled.`);
            return;
          }
          if (isTerminalRunStatus(run.status)) throw new CliError(EXIT.refused, `Run ${run.id} already ended ${run.status}: there is nothing to cancel`);
          await engine.cancel(run.id, options.reason === undefined ? undefined : { reason: options.reason });
          const after = await engine.getRun(run.id);
          cli.print(
            `Cancellation of run ${run.id} requested (status now ${after?.status ?? 'deleted'}${after?.cancelReason === undefined ? '' : `, reason: ${safeText(after.cancelReason)}`}).`,
          );
        });
      });
  },
};
