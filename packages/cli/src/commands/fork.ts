import { InvalidArgumentError } from 'commander';
import type { Json } from '@cairn/core';
import type { CliCommand } from '../command.js';
import { safeText } from '../render/safe-text.js';

const parseJson = (value: string): Json => {
  try {
    return JSON.parse(value) as Json;
  } catch (error) {
    throw new InvalidArgumentError(`not JSON: ${(error as Error).message}`);
  }
};

/** `cairn fork <run-id> --from-step <key>`: a new run that reuses the steps before `key`. */
export const forkCommand: CliCommand = {
  name: 'fork',
  register(program, cli) {
    program
      .command('fork')
      .description(
        'Start a new run of the same workflow that reuses the recorded outputs of the steps before --from-step and runs that step and the rest with the current code (engine.forkRun). The source run is not changed.',
      )
      .argument('<run-id>', 'the source run')
      .requiredOption('--from-step <key>', 'the step key to run again from (as `cairn show` lists them: "charge card", "event:approval", "nap#2")')
      .option('--input <json>', "the fork's input as JSON (default: the source's input)", parseJson)
      .action(async (runId: string, options: { fromStep: string; input?: Json }) => {
        await cli.withConnection(async ({ engine }) => {
          const handle = await engine.forkRun(runId, { fromStep: options.fromStep, ...(options.input === undefined ? {} : { input: options.input }) });
          cli.print(`Forked run ${safeText(runId)} from step ${JSON.stringify(safeText(options.fromStep))}: new run ${handle.id}.`);
        });
      });
  },
};
