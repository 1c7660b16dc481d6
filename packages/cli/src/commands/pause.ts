import type { Engine, RunRecord } from '@cairn/core';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { safeText } from '../render/safe-text.js';

interface PauseOptions {
  workflow?: string;
  reason?: string;
}

/** The run id or the workflow a `pause` / `resume` names: exactly one of them. */
function target(name: string, runId: string | undefined, options: PauseOptions): { runId: string } | { workflow: string } {
  if ((runId === undefined) === (options.workflow === undefined)) {
    throw new CliError(EXIT.usage, `cairn ${name}: name a run id or --workflow <name>, not both and not neither`);
  }
  return runId !== undefined ? { runId } : { workflow: options.workflow as string };
}

const described = (run: RunRecord) => `status ${run.status}${run.paused?.reason === undefined ? '' : `, reason: ${safeText(run.paused.reason)}`}`;

async function pause(engine: Engine, what: { runId: string } | { workflow: string }, reason: string | undefined): Promise<string> {
  const options = reason === undefined ? undefined : { reason };
  if ('workflow' in what) {
    const done = await engine.pauseWorkflow(what.workflow, options);
    return `Workflow ${safeText(what.workflow)} ${done.changed ? 'paused' : 'was already paused'}: ${done.runsPaused} run(s) paused now; runs started while it stays paused wait.`;
  }
  const { run, changed } = await engine.pause(what.runId, options);
  return changed ? `Run ${run.id} paused (${described(run)}).` : `Run ${run.id} is already paused (${described(run)}); nothing changed.`;
}

async function resume(engine: Engine, what: { runId: string } | { workflow: string }): Promise<string> {
  if ('workflow' in what) {
    const done = await engine.resumeWorkflow(what.workflow);
    return `Workflow ${safeText(what.workflow)} ${done.changed ? 'resumed' : 'was not paused'}: ${done.runsResumed} run(s) resumed.`;
  }
  const { run, changed } = await engine.resume(what.runId);
  return changed ? `Run ${run.id} resumed (status ${run.status}): due now.` : `Run ${run.id} is not paused (status ${run.status}); nothing changed.`;
}

/** `cairn pause [run-id] [--workflow <name>]`: pauses a run, or every run of a workflow. */
export const pauseCommand: CliCommand = {
  name: 'pause',
  register(program, cli) {
    program
      .command('pause')
      .description(
        'Pause a run (no worker claims it; a running one stops before its next step, after the steps running finish), or every run of a workflow with --workflow. The deadline keeps counting.',
      )
      .argument('[run-id]', 'the run')
      .option('-w, --workflow <name>', 'pause every run of this workflow, and the runs started while it stays paused')
      .option('-r, --reason <text>', 'why: stored with the pause')
      .addHelpText('after', '\nExamples:\n  cairn pause 01a23c07-42ba-7c23-97b3-8f24fe7e05d1 --reason "bank API down"\n  cairn pause --workflow order')
      .action(async (runId: string | undefined, options: PauseOptions) => {
        const what = target('pause', runId, options);
        await cli.withConnection(async ({ engine }) => cli.print(await pause(engine, what, options.reason)));
      });
  },
};

/** `cairn resume [run-id] [--workflow <name>]`: lifts a pause. */
export const resumeCommand: CliCommand = {
  name: 'resume',
  register(program, cli) {
    program
      .command('resume')
      .description('Resume a paused run (due at once: it continues where it stopped), or the runs a workflow pause paused with --workflow.')
      .argument('[run-id]', 'the run')
      .option('-w, --workflow <name>', "lift the workflow's pause and resume the runs it paused (runs paused on their own stay paused)")
      .action(async (runId: string | undefined, options: PauseOptions) => {
        const what = target('resume', runId, options);
        await cli.withConnection(async ({ engine }) => cli.print(await resume(engine, what)));
      });
  },
};
