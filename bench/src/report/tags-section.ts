import type { BackendReport } from '../results.js';
import { ms, table } from './format.js';

/** The tag listings (`--scenarios=tags`), as Markdown; empty when they were not measured. */
export function tagsSection(backends: readonly BackendReport[]): string[] {
  const measured = backends.filter((b) => b.tags);
  if (measured.length === 0) return [];
  const t0 = measured[0]!.tags!;
  return [
    `### Finding runs by tag: ${t0.runs.toLocaleString('en-US')} runs, two tags each (${t0.customers.toLocaleString('en-US')} customers, 3 plans)`,
    '',
    table(
      ['backend', 'query', 'runs on the first page', 'p50', 'p95'],
      measured.flatMap((b) => b.tags!.queries.map((q) => [b.title, q.query, String(q.found), ms(q.p50Ms), ms(q.p95Ms)])),
    ),
    '',
    'The first page (50 runs) of `engine.listRuns({ tags })`, loaded by the scenario itself. Target (issue 32): ≤ 20 ms among 1,000,000 runs on PostgreSQL.',
    '',
  ];
}
