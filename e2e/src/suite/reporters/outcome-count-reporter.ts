/** Counts of one `node --test` run, as written by `outcomeCountReporter`. */
export interface OutcomeCounts {
  passed: number;
  failed: number;
  skipped: number;
  /** Names of the failed tests (not suites), in order. */
  failures: string[];
}

interface ReporterEvent {
  type: string;
  data?: { name?: string; skip?: unknown; todo?: unknown; details?: { type?: string } };
}

/**
 * A `node --test` reporter that writes one JSON line of `OutcomeCounts` at the end; the CLI reads
 * it to turn failures into its exit code. Suites are not counted, only their tests.
 */
export default async function* outcomeCountReporter(source: AsyncIterable<ReporterEvent>): AsyncGenerator<string> {
  const counts: OutcomeCounts = { passed: 0, failed: 0, skipped: 0, failures: [] };
  for await (const event of source) {
    if (event.data?.details?.type === 'suite') continue;
    if (event.type === 'test:fail') {
      counts.failed += 1;
      counts.failures.push(event.data?.name ?? '(unnamed)');
    } else if (event.type === 'test:pass') {
      if (event.data?.skip !== undefined || event.data?.todo !== undefined) counts.skipped += 1;
      else counts.passed += 1;
    }
  }
  yield `${JSON.stringify(counts)}\n`;
}
