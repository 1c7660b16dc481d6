/**
 * The judge of the proof's limited runs: reads what the worker processes wrote to their ledgers
 * (never the store) and the kills the driver made, and says whether the concurrency limit held.
 */
import type { Body, LedgerEntry } from './ledger.js';
import { pairBodies } from './ledger.js';

/** A SIGKILL the driver sent, at a time comparable with the ledgers' (`crossProcessNow`). */
export interface Kill {
  pid: number;
  at: number;
}

/** What the judge found; `failures` is empty when every check passed. */
export interface Verdict {
  failures: string[];
  /** Per tenant, the most runs with a body in flight at one instant (revoked bodies apart). */
  maxOverlap: Record<string, number>;
  /** The most runs of one tenant with a body in flight at one instant, revoked bodies included. */
  maxOverlapWithRevoked: number;
  /**
   * Bodies whose signal fired before they ended: their execution lost its lease or slot while
   * they ran (a live process that missed its renewals), so the store had given the slot to
   * another run; their result is discarded.
   */
  revoked: number;
  /** Kills that cut at least one limited body short (the killed process held a slot). */
  killsInFlight: number;
  /** Step bodies run, and how many of them a kill cut short. */
  bodies: number;
  cut: number;
  /** Bodies that started while another body of the same run was in flight (a lease taken over). */
  doubled: number;
  /**
   * The largest wait, over every instant a tenant's slots were all busy and one freed, between
   * that instant and the tenant's next body start: after a body ended (`afterEnd`) and after a kill
   * (`afterKill`, which includes the time the dead holder's slot takes to expire). Reported, never
   * asserted: timings vary with the machine.
   */
  maxGapMs: { afterEnd: number; afterKill: number };
}

/**
 * Checks, from the ledger entries:
 * - for each tenant, at every instant at most `limit` runs have a body in flight (a body ends at its
 *   end record, or at the kill of its process; a body with neither is a failure). A revoked body
 *   (its signal fired: its execution lost its slot while it ran) is counted apart
 *   (`maxOverlapWithRevoked`): the store had already handed its slot on, and it stopped when told;
 * - every limited run (`runs`: run id → its tenant, `completed`: the ids the store says completed)
 *   completed and ran a body to its end;
 * - every body a kill cut short ran again, to its end, in another process, so the dead process's
 *   slot was freed for it and for the runs waiting behind it.
 */
export function judgeLedgers(input: { entries: LedgerEntry[]; kills: Kill[]; runs: Map<string, string>; completed: Set<string>; limit: number }): Verdict {
  const failures: string[] = [];
  const { bodies, strayEnds } = pairBodies(input.entries);
  for (const e of strayEnds.slice(0, 5)) failures.push(`end of run ${e.runId} in pid ${e.pid} without a start`);
  const killAt = new Map(input.kills.map((k) => [k.pid, k.at]));
  let cut = 0;
  const cutBodies: Body[] = [];
  for (const body of bodies) {
    if (body.end !== undefined) continue;
    const at = killAt.get(body.pid);
    if (at === undefined || at < body.start) {
      failures.push(`body of run ${body.runId} in pid ${body.pid} never ended, and its process was not killed while it ran`);
      continue;
    }
    body.end = at;
    cut++;
    cutBodies.push(body);
  }
  const killsInFlight = input.kills.filter((k) => cutBodies.some((b) => b.pid === k.pid)).length;

  // Every cut body's run started its body again later, in another process, and finished it.
  for (const body of cutBodies) {
    const again = bodies.some((b) => b.runId === body.runId && b.pid !== body.pid && b.start >= body.end! && !cutBodies.includes(b));
    if (!again) failures.push(`run ${body.runId}, cut by the kill of pid ${body.pid}, never ran its body to the end elsewhere`);
  }
  for (const [runId, tenant] of input.runs) {
    if (!input.completed.has(runId)) failures.push(`limited run ${runId} (${tenant}) did not complete`);
    else if (!bodies.some((b) => b.runId === runId && !cutBodies.includes(b)))
      failures.push(`limited run ${runId} completed without a finished body in the ledgers`);
  }

  const maxOverlap: Record<string, number> = {};
  let maxOverlapWithRevoked = 0;
  const maxGapMs = { afterEnd: 0, afterKill: 0 };
  let doubled = 0;
  const tenants = new Set(bodies.map((b) => b.tenant));
  for (const tenant of tenants) {
    const all = bodies.filter((b) => b.tenant === tenant && b.end !== undefined);
    maxOverlapWithRevoked = Math.max(maxOverlapWithRevoked, mostRunsInFlight(all));
    const mine = all.filter((b) => !b.aborted);
    // Ends sort before starts at the same instant: a slot freed and taken at once is no overlap.
    const events = mine
      .flatMap((b) => [
        { at: b.start, delta: 1, body: b },
        { at: b.end!, delta: -1, body: b },
      ])
      .sort((a, b) => a.at - b.at || a.delta - b.delta);
    const starts = events.filter((e) => e.delta === 1).map((e) => e.at);
    // The limit is on runs executing, so a run counts once however many bodies of it are in
    // flight: a run whose lease lapsed in a live but slow process is taken over under the same
    // slot holder (its run id) while the old body may still be finishing (at-least-once bodies).
    const running = new Map<string, number>();
    let most = 0;
    let worst: number | undefined;
    for (const event of events) {
      const { runId } = event.body;
      if (event.delta === -1 && running.size === input.limit) {
        const next = starts.find((at) => at >= event.at);
        if (next !== undefined) {
          const which = cutBodies.includes(event.body) ? 'afterKill' : 'afterEnd';
          maxGapMs[which] = Math.max(maxGapMs[which], next - event.at);
        }
      }
      const count = (running.get(runId) ?? 0) + event.delta;
      if (event.delta === 1 && count > 1) doubled++;
      if (count > 0) running.set(runId, count);
      else running.delete(runId);
      if (running.size > most) worst = event.at;
      most = Math.max(most, running.size);
    }
    maxOverlap[tenant] = most;
    if (most > input.limit) {
      // Name the bodies in flight at the worst instant, so a failure can be read without the ledgers.
      const at = worst!;
      const which = mine.filter((b) => b.start <= at && b.end! > at);
      const shown = which.map(
        (b) =>
          `run ${b.runId} pid ${b.pid} ${(b.start - at).toFixed(0)}..+${(b.end! - at).toFixed(0)} ms${cutBodies.includes(b) ? ' (cut by a kill)' : ''}${b.aborted ? ' (its signal fired)' : ''}`,
      );
      failures.push(`tenant ${tenant}: ${most} runs in flight at once (limit ${input.limit}): ${shown.join('; ')}`);
    }
  }
  const revoked = bodies.filter((b) => b.aborted).length;
  return { failures, maxOverlap, maxOverlapWithRevoked, revoked, killsInFlight, bodies: bodies.length, cut, doubled, maxGapMs };
}

/** The most distinct runs with a body in flight at one instant (ends before starts at a tie). */
function mostRunsInFlight(bodies: Body[]): number {
  const events = bodies.flatMap((b) => [
    { at: b.start, runId: b.runId, delta: 1 },
    { at: b.end!, runId: b.runId, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const running = new Map<string, number>();
  let most = 0;
  for (const { runId, delta } of events) {
    const count = (running.get(runId) ?? 0) + delta;
    if (count > 0) running.set(runId, count);
    else running.delete(runId);
    most = Math.max(most, running.size);
  }
  return most;
}
