import { CairnError } from '../../errors/cairn-error.js';
import { toErrorRecord } from '../../errors/error-record-codec.js';
import type { ErrorRecord } from '../../model/error-record.js';
import type { RunRecord } from '../../model/run.js';
import type { SlotStore, WorkflowStore } from '../../store/workflow-store.js';
import type { AnyWorkflowDefinition } from '../define/any-workflow-definition.js';
import { toMilliseconds } from '../define/duration.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { flowKeys, type RunFlowKeys } from './flow-keys.js';
import { earliest } from '../execution/run-deadline.js';

/** What a claimed run of a limited workflow may do (see `enterFlow`). */
export type FlowEntry =
  /**
   * Execute; `limited`: the workflow has a limit (the run may have been sent back to wait before);
   * `slot`: the run's concurrency slot when it has a concurrency limit.
   */
  | { kind: 'enter'; limited: boolean; slot?: RunSlot }
  /** Not now: give the lease back and wait until `wakeAt` (a wake-up may come sooner). */
  | { kind: 'wait'; wakeAt: number; reason: 'concurrency' | 'rate-limit' }
  /** The workflow's key function refused the run's input (it changed since the start): fail the run. */
  | { kind: 'fail'; error: ErrorRecord };

/**
 * The concurrency slot of one run, held by this execution (`held`) or not (a run that only ends:
 * its place in line is still given up when it ends).
 */
export class RunSlot {
  /** The first waiter `release` returned, woken by `wakeNext`. */
  private next: string | undefined;

  constructor(
    private readonly rt: EngineRuntime,
    private readonly slots: SlotStore,
    readonly key: string,
    private readonly run: RunRecord,
    readonly held: boolean,
  ) {}

  /** Extends the slot with the lease; false when it was taken over (the lease is as good as lost). */
  renew(expiresAt: number, now: number): Promise<boolean> {
    return this.slots.renew(this.key, this.run.id, expiresAt, now);
  }

  /**
   * Gives the slot (and the run's place in line) up, before the run's outcome is written: the run
   * still holds its lease then, so no other worker can have claimed it and re-taken this same
   * holder's slot, which this release would free. A failure only costs the slot's lease time.
   */
  async release(): Promise<void> {
    try {
      this.next = await this.slots.release(this.key, this.run.id, this.rt.clock.now());
    } catch (error) {
      this.rt.logger.warn(
        { runId: this.run.id, workflow: this.run.workflow, workerId: this.rt.workerId, err: error },
        `Run ${this.run.id}: releasing its concurrency slot failed; it frees itself when its lease ends`,
      );
    }
  }

  /**
   * Wakes and dispatches the waiter `release` returned, so it claims the slot now rather than at
   * its fallback recheck. A failure only delays it until that recheck.
   */
  async wakeNext(): Promise<void> {
    const next = this.next;
    this.next = undefined;
    if (next === undefined) return;
    try {
      await this.rt.store.runs.wake(next, this.rt.clock.now());
      await this.rt.dispatchRun({ id: next, workflow: this.run.workflow });
    } catch (error) {
      this.rt.logger.warn(
        { runId: next, workflow: this.run.workflow, workerId: this.rt.workerId, err: error },
        `Run ${next}: waking it for a freed concurrency slot failed; it looks again at its recheck`,
      );
    }
  }
}

/** Refuses, at `createEngine`, limited workflows over a store that cannot hold slots. */
export function checkFlowStore(store: WorkflowStore, workflows: readonly AnyWorkflowDefinition[]): void {
  if (store.slots !== undefined) return;
  const limited = workflows.find((def) => def.options.concurrency !== undefined || def.options.rateLimit !== undefined);
  if (limited === undefined) return;
  throw new CairnError(
    'INVALID_INPUT',
    `Workflow ${JSON.stringify(limited.name)} has a concurrency or rate limit, but store ${store.name} has no slots to enforce it with`,
    {
      data: { workflow: limited.name, store: store.name },
    },
  );
}

/**
 * Decides whether a claimed run of `def` may execute now (docs/flow-control.md):
 * - its first execution (nothing recorded yet) takes a start rate slot (`r:`), held for the
 *   period; refused, the run waits until the earliest slot frees;
 * - then a concurrency slot (`c:`), held with the lease; refused, the run waits for a wake-up
 *   from a release, or until the earliest held slot would free itself, or the fallback recheck
 *   (`timings.slotRecheckMs`), whichever comes first.
 * Both wait in line by priority, then creation time. A run being cancelled or past its deadline
 * takes no slot: it only ends, and must not wait for a slot to do so.
 */
export async function enterFlow(rt: EngineRuntime, run: RunRecord, def: AnyWorkflowDefinition, recordedSteps: number): Promise<FlowEntry> {
  const { concurrency, rateLimit } = def.options;
  const slots = rt.store.slots;
  if ((concurrency === undefined && rateLimit === undefined) || slots === undefined) return { kind: 'enter', limited: false };
  let keys: RunFlowKeys;
  try {
    keys = flowKeys(def, run.input);
  } catch (error) {
    return { kind: 'fail', error: toErrorRecord(error) };
  }
  const now = rt.clock.now();
  const onlyEnds = run.cancelRequested === true || (run.deadline !== undefined && run.deadline <= now);
  const recheckMs = rt.timings.slotRecheckMs;
  const line = { priority: run.priority ?? 0, queuedAt: run.createdAt };
  if (keys.rate !== undefined && rateLimit !== undefined && recordedSteps === 0 && !onlyEnds) {
    const periodMs = toMilliseconds(rateLimit.period);
    const grant = await slots.acquire(
      { key: keys.rate, limit: rateLimit.limit, holder: run.id, expiresAt: now + periodMs, wait: { ...line, expiresAt: now + periodMs + recheckMs } },
      now,
    );
    if (!grant.acquired) {
      return {
        kind: 'wait',
        wakeAt: earliest(Math.max(now + 1, grant.freeAt ?? now + Math.min(periodMs, recheckMs)), run.deadline) as number,
        reason: 'rate-limit',
      };
    }
  }
  if (keys.concurrency === undefined || concurrency === undefined) return { kind: 'enter', limited: true };
  if (onlyEnds) return { kind: 'enter', limited: true, slot: new RunSlot(rt, slots, keys.concurrency, run, false) };
  const leaseEnd = run.lease?.expiresAt ?? now + rt.timings.leaseMs;
  const grant = await slots.acquire(
    {
      key: keys.concurrency,
      limit: concurrency.limit,
      holder: run.id,
      expiresAt: leaseEnd,
      wait: { ...line, expiresAt: now + recheckMs + rt.timings.leaseMs },
    },
    now,
  );
  if (grant.acquired) return { kind: 'enter', limited: true, slot: new RunSlot(rt, slots, keys.concurrency, run, true) };
  // A slot whose holder died frees itself at its lease end: look again then if that is sooner.
  const wakeAt = Math.min(now + recheckMs, Math.max(now + 1, grant.freeAt ?? Infinity));
  return { kind: 'wait', wakeAt: earliest(wakeAt, run.deadline) as number, reason: 'concurrency' };
}
