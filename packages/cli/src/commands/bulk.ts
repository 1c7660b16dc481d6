import { Option, type Command } from 'commander';
import type { BulkResult, Engine, RunStatus } from '@cairn/core';
import { BULK_ACTIONS, type BulkAction, type BulkFilter, type BulkOperationRecord, type BulkProgress } from '@cairn/core/backend';
import type { CliContext } from '../cli-context.js';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { intIn, parseStatuses, parseTagOption, parseTime } from '../parse-options.js';
import { formatTime } from '../render/format.js';
import { safeText } from '../render/safe-text.js';
import { textTable } from '../render/text-table.js';

interface BulkOptions {
  workflow?: string;
  version?: string;
  status?: RunStatus[];
  tag?: Record<string, string>;
  since?: number;
  until?: number;
  errorCode?: string;
  dryRun?: boolean;
  reason?: string;
  pageSize: number;
  json?: boolean;
}

const WHAT: Record<BulkAction, string> = {
  cancel: 'Request cancellation of every matched run that has not ended.',
  retry: 'Retry every matched failed or cancelled run from where it ended.',
  pause: 'Pause every matched run that has not ended.',
  resume: 'Resume every matched paused run.',
  delete: 'Delete every matched run that has ended (active runs are skipped).',
};

function filterOf(options: BulkOptions): BulkFilter {
  const filter: BulkFilter = {};
  if (options.workflow !== undefined) filter.workflow = options.workflow;
  if (options.version !== undefined) filter.version = options.version;
  if (options.status !== undefined) filter.status = options.status;
  if (options.tag !== undefined) filter.tags = { ...options.tag };
  if (options.since !== undefined) filter.createdAfter = options.since;
  if (options.until !== undefined) filter.createdBefore = options.until;
  if (options.errorCode !== undefined) filter.errorCode = options.errorCode;
  return filter;
}

const countsLine = (c: BulkOperationRecord['counts']) => `${c.matched} matched: ${c.done} done, ${c.skipped} skipped, ${c.failed} failed`;

function renderOperation(op: BulkOperationRecord): string {
  const lines = [
    `Bulk ${op.action} ${op.id}: ${op.state}${op.state === 'running' && op.owner ? ` (owner ${safeText(op.owner.id)} until ${formatTime(op.owner.expiresAt)})` : ''}`,
    `  filter: ${safeText(JSON.stringify(op.filter))}`,
    `  ${countsLine(op.counts)} (${op.pages} page(s)); started ${formatTime(op.createdAt)}, last page ${formatTime(op.updatedAt)}`,
  ];
  for (const f of op.failures.slice(0, 20)) lines.push(`  failed ${safeText(f.runId)}: ${safeText(f.code)} ${safeText(f.message)}`);
  if (op.failures.length > 20) lines.push(`  ... ${op.failures.length - 20} more failure(s) kept in the record (--json)`);
  return lines.join('\n');
}

/** Prints the outcome of a bulk call and fails the command (exit 1) when some run failed. */
function report(cli: CliContext, result: BulkResult, json: boolean | undefined): void {
  if (json) cli.printJson(result);
  else if (result.dryRun) {
    cli.print(`Dry run: ${result.counts.matched} run(s) match; ${result.action} applies to ${result.applicable} of them now. Nothing was changed.`);
  } else cli.print(renderOperation(result.operation!));
  if (result.counts.failed > 0)
    throw new CliError(EXIT.failure, `${result.counts.failed} run(s) failed; see the failures above (the operation is stored as ${result.operation?.id})`);
}

/** Progress on stderr, so that --json stays one document on stdout. */
const progressTo = (cli: CliContext) => (p: BulkProgress) => cli.warn(`page ${p.pages}: ${countsLine(p.counts)}`);

async function onBulk<T>(cli: CliContext, fn: (engine: Engine) => Promise<T>): Promise<T> {
  return cli.withConnection(({ engine }) => fn(engine));
}

function actionCommand(bulk: Command, cli: CliContext, action: BulkAction): void {
  bulk
    .command(action)
    .description(`${WHAT[action]} Runs are listed page by page (newest first) and the progress is stored after each page.`)
    .option('-w, --workflow <name>', 'only runs of this workflow')
    .option('--version <version>', 'only runs pinned to this version of the workflow')
    .addOption(new Option('-s, --status <status>', 'only runs in this status; comma-separated or repeated').argParser(parseStatuses))
    .addOption(new Option('-t, --tag <key=value>', 'only runs carrying this tag; repeated: all of them').argParser(parseTagOption))
    .addOption(
      new Option('--since <time>', 'only runs created at or after: an ISO date or a duration ago (30m, 2h, 7d)').argParser((v: string) => parseTime(v)),
    )
    .addOption(new Option('--until <time>', 'only runs created before: an ISO date or a duration ago').argParser((v: string) => parseTime(v)))
    .option('--error-code <code>', 'only runs whose error carries this code (RunRecord.error.code)')
    .option('--dry-run', 'count the runs that match and those the action applies to; change nothing')
    .option('-r, --reason <text>', action === 'cancel' || action === 'retry' ? `why: passed to each ${action}` : 'ignored by this action')
    .addOption(new Option('--page-size <n>', 'runs per page, 1..1000').default(200).argParser(intIn(1, 1000)))
    .option('--json', 'print the result as JSON (progress lines go to stderr)')
    .action(async (options: BulkOptions) => {
      const filter = filterOf(options);
      const result = await onBulk(cli, (engine) =>
        engine.bulk({
          filter,
          action,
          ...(options.dryRun ? { dryRun: true } : { onProgress: progressTo(cli) }),
          ...(options.reason === undefined || (action !== 'cancel' && action !== 'retry') ? {} : { reason: options.reason }),
          pageSize: options.pageSize,
        }),
      );
      report(cli, result, options.json);
    });
}

/** `cairn bulk <action> [filters]`, `cairn bulk list|show|continue`: act on many runs at once. */
export const bulkCommand: CliCommand = {
  name: 'bulk',
  register(program, cli) {
    const bulk: Command = program
      .command('bulk')
      .description('Act on every run a filter matches (cancel, retry, pause, resume, delete), or look at and continue bulk operations.')
      .addHelpText(
        'after',
        '\nExamples:\n  cairn bulk cancel --workflow order --tag customer=c-42 --dry-run\n  cairn bulk retry --status failed --error-code PAYMENT_GATEWAY --since 1d\n  cairn bulk continue 01a23c07-42ba-7c23-97b3-8f24fe7e05d1',
      );
    for (const action of BULK_ACTIONS) actionCommand(bulk, cli, action);
    bulk
      .command('list')
      .description('List bulk operations, newest first.')
      .addOption(new Option('-n, --limit <n>', 'operations, 1..1000').default(20).argParser(intIn(1, 1000)))
      .option('--json', 'print { operations } as JSON')
      .action(async (options: { limit: number; json?: boolean }) => {
        const found = await onBulk(cli, (engine) => engine.listBulk({ limit: options.limit }));
        if (options.json) {
          cli.printJson({ operations: found });
          return;
        }
        if (found.length === 0) cli.print('No bulk operations.');
        else
          cli.print(
            textTable(
              ['ID', 'ACTION', 'STATE', 'MATCHED', 'DONE', 'SKIPPED', 'FAILED', 'STARTED'],
              found.map((o) => [
                o.id,
                o.action,
                o.state,
                ...[o.counts.matched, o.counts.done, o.counts.skipped, o.counts.failed].map(String),
                formatTime(o.createdAt),
              ]),
            ),
          );
      });
    bulk
      .command('show')
      .description("A bulk operation's filter, progress and failures.")
      .argument('<id>', 'the operation')
      .option('--json', 'print the record as JSON')
      .action(async (id: string, options: { json?: boolean }) => {
        const op = await onBulk(cli, (engine) => engine.getBulk(id));
        if (op === undefined) throw new CliError(EXIT.notFound, `Bulk operation ${safeText(id)} not found`);
        if (options.json) cli.printJson(op);
        else cli.print(renderOperation(op));
      });
    bulk
      .command('continue')
      .description('Take up a bulk operation whose process stopped (once its lease ran out) from the last page it stored.')
      .argument('<id>', 'the operation')
      .addOption(new Option('--page-size <n>', 'runs per page, 1..1000').default(200).argParser(intIn(1, 1000)))
      .option('--json', 'print the result as JSON (progress lines go to stderr)')
      .action(async (id: string, options: { pageSize: number; json?: boolean }) => {
        const result = await onBulk(cli, (engine) => engine.resumeBulk(id, { pageSize: options.pageSize, onProgress: progressTo(cli) }));
        report(cli, result, options.json);
      });
  },
};
