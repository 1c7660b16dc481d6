import type { FaultInjector, FaultPoint, FaultSite } from '../engine/fault-point.js';

/** The error a scripted fault throws; the engine treats it as the process dying at that point. */
export class SimulatedCrash extends Error {
  constructor(readonly site: FaultSite) {
    super(`Simulated crash at ${site.point} (run ${site.runId}${site.stepKey === undefined ? '' : `, step ${site.stepKey}`})`);
    this.name = 'SimulatedCrash';
  }
}

/** A rule: crash at `point` (optionally only for one step key), the first `times` times it matches. */
export interface CrashRule {
  point: FaultPoint;
  stepKey?: string;
  runId?: string;
  /** How many matching hits crash (default 1). */
  times?: number;
}

/** A fault injector driven by rules, which also records every site it saw. */
export interface ScriptedFaults extends FaultInjector {
  /** Adds a rule. */
  crashAt(rule: CrashRule): void;
  /** Every site hit so far, in order. */
  readonly hits: readonly FaultSite[];
  /** The crashes thrown so far. */
  readonly crashes: readonly SimulatedCrash[];
}

/** Creates a scripted fault injector for `createEngine({ faults })`. */
export function createFaults(rules: CrashRule[] = []): ScriptedFaults {
  const pending = rules.map((r) => ({ ...r, left: r.times ?? 1 }));
  const hits: FaultSite[] = [];
  const crashes: SimulatedCrash[] = [];
  return {
    hits,
    crashes,
    crashAt(rule) {
      pending.push({ ...rule, left: rule.times ?? 1 });
    },
    hit(site) {
      hits.push(site);
      const rule = pending.find(
        (r) =>
          r.left > 0 && r.point === site.point && (r.stepKey === undefined || r.stepKey === site.stepKey) && (r.runId === undefined || r.runId === site.runId),
      );
      if (!rule) return;
      rule.left--;
      const crash = new SimulatedCrash(site);
      crashes.push(crash);
      throw crash;
    },
  };
}
