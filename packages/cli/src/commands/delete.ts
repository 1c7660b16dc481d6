import { CairnError } from '@cairn/core';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { safeText } from '../render/safe-text.js';

/** `cairn delete <run-id>`: deletes a run and everything it recorded. */
export const deleteCommand: CliCommand = {
  name: 'delete',
  register(program, cli) {
    program
      .command('delete')
      .description('Delete a run and everything it recorded (steps, attempts, state, events). An active run needs --force.')
      .argument('<run-id>', 'the run')
      .option('-f, --force', 'also delete a run that has not ended (its parent, if any, sees it as deleted)')
      .action(async (runId: string, options: { force?: boolean }) => {
        await cli.withConnection(async ({ engine }) => {
          const deleted = await engine.deleteRun(runId, options.force ? { force: true } : {}).catch((error: unknown) => {
            if (!CairnError.is(error, 'RUN_ACTIVE')) throw error;
            const status = ((error as CairnError).data as { status?: string } | undefined)?.status ?? 'active';
            throw new CliError(EXIT.refused, `Run ${safeText(runId)} is ${status}: cancel it first, or pass --force`);
          });
          if (!deleted) throw new CliError(EXIT.notFound, `Run ${safeText(runId)} not found`);
          cli.print(`Run ${safeText(runId)} deleted.`);
        });
      });
  },
};
