import type { BackendReport } from '../results.js';
import { ms, table } from './format.js';

/** Request latency to a suspended run (`--scenarios=requests`), as Markdown; empty when it was not measured. */
export function requestsSection(backends: readonly BackendReport[]): string[] {
  const measured = backends.filter((b) => b.requests);
  if (measured.length === 0) return [];
  const r0 = measured[0]!.requests!;
  return [
    `### Requests: a request's round trip to a suspended run from another connection (${r0.requests} requests, one after another)`,
    '',
    table(
      ['backend', 'caller woken by', 'p50', 'p90', 'p99', 'max'],
      measured.map((b) => {
        const x = b.requests!;
        return [b.title, x.woken, ms(x.p50Ms), ms(x.p90Ms), ms(x.p99Ms), ms(x.maxMs)];
      }),
    ),
    '',
    '`engine.request` of a second engine without workers, over its own connection, to a run that waits in `ctx.receiveRequest` and replies at once: the send, the dispatch to the worker, the claim, the receipt and the reply writes, and the caller woken by the store (signals where it has them, else its 100 ms poll and the worker finding the run by its own poll). Target (issue 31): p50 ≤ 50 ms on PostgreSQL.',
    '',
  ];
}
