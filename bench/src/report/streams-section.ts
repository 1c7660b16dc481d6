import type { BackendReport } from '../results.js';
import { ms, table } from './format.js';

/** Stream reader latency (`--scenarios=streams`), as Markdown; empty when it was not measured. */
export function streamsSection(backends: readonly BackendReport[]): string[] {
  const measured = backends.filter((b) => b.streams);
  if (measured.length === 0) return [];
  const s0 = measured[0]!.streams!;
  return [
    `### Streams: a chunk's latency to a reader on another connection (${s0.chunks} chunks, each after a step of 0-20 ms)`,
    '',
    table(
      ['backend', 'reader woken by', 'p50', 'p90', 'p99', 'max', 'of which the write (p50)', 'store writes per chunk'],
      measured.map((b) => {
        const x = b.streams!;
        return [b.title, x.woken, ms(x.p50Ms), ms(x.p90Ms), ms(x.p99Ms), ms(x.maxMs), ms(x.appendP50Ms), String(x.writesPerChunk)];
      }),
    ),
    '',
    "From the writer's clock just before `ctx.emit` (the write included) to the chunk's arrival in `engine.readStream` of a second engine over its own connection (its own LISTEN / SUBSCRIBE connection where the store has signals; otherwise it reads every 100 ms). Target (issue 31): p50 ≤ 20 ms on PostgreSQL and Redis.",
    '',
  ];
}
