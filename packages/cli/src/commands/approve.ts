import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { importBackend } from '../connect/backend.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { safeText } from '../render/safe-text.js';

interface ApproveCommandOptions {
  by: string;
  decision: string;
  payload?: string;
}

/** What each refusal of `approve` exits with. */
const REFUSALS: Record<string, ExitCode> = {
  APPROVAL_INVALID: EXIT.usage,
  APPROVAL_FORBIDDEN: EXIT.refused,
  APPROVAL_EXPIRED: EXIT.refused,
  APPROVAL_NOT_PENDING: EXIT.refused,
};

/**
 * `cairn approve <run-id> <node> --by <who> --decision approve|reject [--payload <json>]`: answers
 * an approval gate of a graph run (`approve` of `@cairn/graph`). A refusal records nothing: exit 2
 * for a malformed answer or a payload the gate's schema refuses, 4 for someone not among the
 * approvers, an expired gate, or a gate not waiting.
 */
export const approveCommand: CliCommand = {
  name: 'approve',
  register(program, cli) {
    program
      .command('approve')
      .description('Answer an approval gate of a graph run. The answer is checked (approvers, payload schema, expiry) before anything is recorded.')
      .argument('<run-id>', 'the run')
      .argument('<node>', 'the approval gate (node id)')
      .requiredOption('--by <who>', 'who answers; checked against the gate’s approvers (the identity is asserted by whoever runs the command)')
      .requiredOption('--decision <decision>', 'approve or reject')
      .option('--payload <json>', 'the answer’s payload, as JSON; checked against the gate’s schema')
      .action(async (runId: string, node: string, options: ApproveCommandOptions) => {
        const graph = await importBackend({ title: 'graph', packages: '@cairn/graph' }, () => import('@cairn/graph'));
        let payload: unknown;
        if (options.payload !== undefined) {
          try {
            payload = JSON.parse(options.payload);
          } catch (error) {
            throw new CliError(EXIT.usage, `--payload is not JSON: ${(error as Error).message}`);
          }
        }
        await cli.withConnection(async ({ engine }) => {
          try {
            await graph.approve(engine, runId, node, {
              by: options.by,
              decision: options.decision as 'approve',
              ...(payload === undefined ? {} : { payload: payload as never }),
            });
          } catch (error) {
            if (graph.GraphError.is(error)) throw new CliError(REFUSALS[error.code] ?? EXIT.failure, `${error.code}: ${safeText(error.message)}`);
            throw error;
          }
          cli.print(`Run ${safeText(runId)}: gate ${safeText(node)} answered ${safeText(options.decision)} by ${safeText(options.by)}.`);
        });
      });
  },
};
