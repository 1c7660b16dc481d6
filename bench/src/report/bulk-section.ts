import type { BackendReport } from '../results.js';
import { ms, table } from './format.js';

/** The bulk cancel (`--scenarios=bulk`), as Markdown; empty when it was not measured. */
export function bulkSection(backends: readonly BackendReport[]): string[] {
  const measured = backends.filter((b) => b.bulk);
  if (measured.length === 0) return [];
  const b0 = measured[0]!.bulk!;
  return [
    `### Bulk cancel: ${b0.runs.toLocaleString('en-US')} pending runs, one \`engine.bulk\` (pages of ${b0.pageSize})`,
    '',
    table(
      [
        'backend',
        'dry run',
        'cancel, total',
        'runs/s',
        'pages reported',
        'first progress',
        'store calls per run',
        'every run cancel-requested, decoys untouched',
      ],
      measured.map((b) => {
        const x = b.bulk!;
        return [
          b.title,
          ms(x.dryRunMs),
          ms(x.totalMs),
          x.runsPerSecond.toFixed(0),
          String(x.pages),
          ms(x.firstProgressMs),
          x.storeCallsPerRun.toFixed(2),
          x.allRequested ? 'yes' : 'NO',
        ];
      }),
    ),
    '',
    "An engine that was never started (an operator's process) cancels every run of one workflow; as many runs of another workflow (at most 1,000) must stay untouched. Target (issue 32): ≤ 30 s for 10,000 runs on PostgreSQL, with progress reported.",
    '',
  ];
}
