// The simulation fuzz's judges of what a run left in the store besides its steps: its streams and
// the replies to the requests sent to it, each against the program's truth.
import type { FaultSite } from '@cairn/core/testing';
import type { EngineWorld } from '../engine/engine-world.js';
import type { Truth } from '../fixtures/random-program.js';

/** How one run of a program went: what the test counts, and what it prints for a failure. */
export interface RunReport {
  wrong: string[];
  doubleRun: string[];
  lost: string[];
  stuck: string[];
  crashes: FaultSite[];
  output?: unknown;
  log: string[];
  /** Times the driver looked at the run (about one per timer fired). */
  looks: number;
  /** Pauses the pause mode made. */
  pauses: number;
  /** Store calls the engines made. */
  storeCalls: number;
  /** Real time the run took, ms. */
  ms: number;
}

/** Each stream of the run holds exactly its chunks, in order, each once, whatever crashed. */
export async function judgeStreams(w: EngineWorld, runId: string, truth: Truth, mode: string, report: RunReport): Promise<void> {
  const streams = w.raw.streams;
  if (streams === undefined) return;
  // Requests keep their receipts and replies in streams of the engine's own (`$request:...`).
  const listed = (await streams.list(runId))
    .map((s) => s.stream)
    .filter((name) => !name.startsWith('$'))
    .sort();
  const expected = [...truth.streams.keys()].sort();
  if (JSON.stringify(listed) !== JSON.stringify(expected))
    report.wrong.push(`${mode}: streams ${JSON.stringify(listed)}, expected ${JSON.stringify(expected)}`);
  for (const [stream, chunks] of truth.streams) {
    const stored = (await streams.read(runId, stream, 0, 1000)).map((e) => [e.index, e.data]);
    const want = chunks.map((chunk, index) => [index, chunk]);
    if (JSON.stringify(stored) !== JSON.stringify(want))
      report.wrong.push(`${mode}: stream ${stream} holds ${JSON.stringify(stored)}, expected ${JSON.stringify(want)}`);
  }
}

/**
 * Every request sent got a reply (a caller waiting on a store without signals reads it on its poll
 * timer, so the clock moves until all are settled), and per name the replies are the program's,
 * each exactly once.
 */
export async function judgeReplies(
  w: EngineWorld,
  replies: readonly { name: string; outcome: Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> }[],
  truth: Truth,
  mode: string,
  report: RunReport,
): Promise<void> {
  let settled = 0;
  for (const r of replies) void r.outcome.then(() => (settled += 1));
  for (let i = 0; i < 200 && settled < replies.length; i += 1) {
    await w.settle();
    if (settled < replies.length) await w.clock.advanceToNextTimer();
  }
  if (settled < replies.length) {
    report.stuck.push(`${mode}: ${replies.length - settled} of ${replies.length} requests never settled`);
    return;
  }
  const got = new Map<string, string[]>();
  for (const r of replies) {
    const outcome = await r.outcome;
    if (!outcome.ok) {
      report.wrong.push(`${mode}: a request ${r.name} failed: ${(outcome.error as Error).message}`);
      continue;
    }
    got.set(r.name, [...(got.get(r.name) ?? []), JSON.stringify(outcome.value)]);
  }
  for (const [name, want] of truth.replies) {
    const expected = want.map((reply) => JSON.stringify(reply)).sort();
    const actual = (got.get(name) ?? []).sort();
    if (JSON.stringify(actual) !== JSON.stringify(expected))
      report.wrong.push(`${mode}: requests ${name} got ${actual.join(', ')}, expected ${expected.join(', ')}`);
  }
}
