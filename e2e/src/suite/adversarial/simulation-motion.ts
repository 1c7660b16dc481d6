// The simulation fuzz's judge of liveness: whether every run of a program keeps moving within the
// bound, read from the engines' store calls (see `MotionWatch`).
import { isTerminalRunStatus, type RunRecord } from '@cairn/core';
import type { StoreCall } from '@cairn/core/backend';
import { LIVENESS_BOUND_MS } from './liveness.js';

/** What the store calls tell of one run: when it was created, claimed, ended, and whose child it is. */
interface Motion {
  workflow: string;
  parent?: string;
  created: number;
  /** The last claim or lease renewal: when it was last seen executing. */
  lastClaim?: number;
  ended?: number;
  /** Paused now (the pause mode): a paused run is not expected to move. */
  paused?: boolean;
  /** The last resume: a paused run moves again from then on. */
  resumed?: number;
}

/**
 * "Stuck" is "not moving within the bound" (`LIVENESS_BOUND_MS`: leaseMs + 2 × recoveryIntervalMs
 * of the world's engines, 50 s): every run of the program must be claimed (executing again) or end
 * within the bound of its last move — its creation, its last claim, or the end of a child it waits
 * for — unless it waits for a child still running (the child is judged instead); and a parent must
 * be claimed within the bound of each child's end. A run that renews its lease is executing (a
 * body waiting on real time lets the driver move the clock). A program's own timers (sleeps up to 20 s,
 * backoffs up to 2.5 s) are shorter than the bound, so only a lost wake-up or a slow recovery
 * breaks it. Judged from the engines' store calls (`runs.create`, `runs.claim`, `runs.renew`,
 * terminal `runs.transition`, `runs.delete`, each with the time it was given), at every look of the driver:
 * a look comes after each timer fires, so the calls it has not seen yet were made at `now`, and
 * the gaps are judged up to `now` before they are read.
 */
export class MotionWatch {
  private read = 0;
  private readonly runs = new Map<string, Motion>();
  private readonly stuck = new Set<string>();
  readonly problems: string[] = [];

  constructor(private readonly calls: readonly StoreCall[]) {}

  look(now: number): void {
    this.judge(now);
    for (; this.read < this.calls.length; this.read += 1) this.take(this.calls[this.read] as StoreCall, now);
  }

  private judge(now: number): void {
    for (const [id, run] of this.runs) {
      if (run.ended !== undefined || run.paused === true || this.stuck.has(id)) continue;
      const children = [...this.runs.entries()].filter(([, c]) => c.parent === id);
      const claimed = run.lastClaim ?? -Infinity;
      // A child's end the parent has not been claimed since.
      const untaken = children.map(([, c]) => c.ended).filter((e): e is number => e !== undefined && e > claimed);
      // A child that ended while its parent was paused is taken from the resume on.
      const oldestUntaken = Math.max(Math.min(...untaken), run.resumed ?? -Infinity);
      const waitsForRunning = children.some(([, c]) => c.ended === undefined);
      const since = Math.max(run.created, claimed, run.resumed ?? -Infinity, ...children.map(([, c]) => c.ended ?? -Infinity));
      let quiet: string | undefined;
      if (now - oldestUntaken > LIVENESS_BOUND_MS) quiet = `not claimed ${(now - oldestUntaken) / 1000} s after a child ended`;
      else if (!waitsForRunning && now - since > LIVENESS_BOUND_MS) quiet = `not moving for ${(now - since) / 1000} s`;
      if (quiet === undefined) continue;
      this.stuck.add(id);
      this.problems.push(
        `run ${id} (${run.workflow}${run.parent === undefined ? '' : `, child of ${run.parent}`}) ${quiet} (bound ${LIVENESS_BOUND_MS / 1000} s)`,
      );
    }
  }

  /** Reads one call, made at `now` or before (`runs.delete` carries no time of its own). */
  private take(call: StoreCall, now: number): void {
    const outcome = call.outcome;
    if (outcome?.ok !== true) return;
    const value = outcome.value as { id?: string; parent?: { runId: string }; workflow?: string; status?: string } | undefined;
    switch (call.method) {
      case 'runs.create': {
        const { run } = outcome.value as { run: { id: string; workflow: string; parent?: { runId: string } } };
        if (!this.runs.has(run.id))
          this.runs.set(run.id, { workflow: run.workflow, created: call.args[1] as number, ...(run.parent ? { parent: run.parent.runId } : {}) });
        return;
      }
      // A claim, or a renewal of the lease: the run is executing.
      case 'runs.claim':
      case 'runs.renew': {
        const run = value?.id === undefined ? undefined : this.runs.get(value.id);
        if (run) run.lastClaim = call.args[3] as number;
        return;
      }
      case 'runs.transition': {
        const run = value?.id === undefined ? undefined : this.runs.get(value.id);
        if (run && value?.status !== undefined && isTerminalRunStatus(value.status as RunRecord['status'])) run.ended = call.args[3] as number;
        return;
      }
      // The pause mode: a paused run stands still until it is resumed, which is its next move.
      case 'pauses.pauseRun':
      case 'pauses.resumeRun': {
        const change = outcome.value as { run: { id: string }; changed: boolean };
        const run = this.runs.get(change.run.id);
        if (!run || !change.changed) return;
        run.paused = call.method === 'pauses.pauseRun';
        if (!run.paused) run.resumed = call.args[1] as number;
        return;
      }
      case 'runs.delete': {
        const run = this.runs.get(call.args[0] as string);
        if (run && outcome.value === true) run.ended = now;
        return;
      }
    }
  }
}
