import type { Json } from '../../model/json.js';
import { isTerminalRunStatus, type NewRun, type RunRecord } from '../../model/run.js';
import { checkIdentifier, checkOptions, invalidInput } from '../check-input.js';
import type { EngineRuntime } from '../engine-runtime.js';
import type { SingletonOption } from './start-options.js';
import { ChainWalk, MAX_START_KEY, chainKey, chainSlots, parseChainKey, startKey } from './start-chain.js';

const KIND = 'singleton';

/** Checks a `singleton` option (`INVALID_INPUT` otherwise); a workflow default may compute its key. */
export function checkSingleton(what: string, value: unknown, keyMayBeFunction: boolean): void {
  if (value === undefined) return;
  const options = checkOptions(what, value, ['key', 'mode']);
  if (options['mode'] !== 'skip' && options['mode'] !== 'queue') throw invalidInput(`${what} mode`, "must be 'skip' or 'queue'", options['mode']);
  const key = options['key'];
  if (keyMayBeFunction && typeof key === 'function') return;
  checkIdentifier(`${what} key`, key, MAX_START_KEY);
}

/**
 * Starts a run of a singleton key (`run` without an idempotency key): `skip` returns the newest
 * run of the key's chain when it has not ended; `queue` always appends a run to the chain.
 */
export async function startSingleton(rt: EngineRuntime, run: NewRun, option: SingletonOption, now: number): Promise<{ run: RunRecord; created: boolean }> {
  const key = startKey(`Workflow ${JSON.stringify(run.workflow)} singleton key`, option.key as (input: Json) => string, run.input);
  const walk = new ChainWalk(rt, chainSlots(rt, 'singleton'), { workflow: run.workflow, kind: KIND, key });
  for (;;) {
    const newest = await walk.toEnd(now);
    if (option.mode === 'skip' && newest !== undefined && !isTerminalRunStatus(newest.status)) {
      await walk.movePointer(newest);
      return { run: newest, created: false };
    }
    const created = await walk.append(run, now);
    if (created !== undefined) return { run: created, created: true };
  }
}

/**
 * Whether a claimed run may start its body (or end): a run of a singleton chain waits until its
 * predecessor has ended (or was deleted). Checked only before the run's first step is recorded:
 * a run that started did so after its predecessor ended, and an end is final (retryRun refuses
 * singleton runs). Every run ahead has ended then too, as each one waited for its own predecessor.
 */
export async function singletonTurn(rt: EngineRuntime, run: RunRecord, recordedSteps: number): Promise<{ wait: false } | { wait: true; wakeAt: number }> {
  if (recordedSteps > 0) return { wait: false };
  const chain = parseChainKey(run.idempotencyKey);
  if (chain === undefined || chain.kind !== KIND || chain.predecessor === '') return { wait: false };
  const before = await rt.store.runs.get(chain.predecessor);
  if (before === undefined || isTerminalRunStatus(before.status)) return { wait: false };
  // Woken by the predecessor's end; the recheck bounds a lost wake-up.
  return { wait: true, wakeAt: rt.clock.now() + rt.timings.slotRecheckMs };
}

/** After a singleton run ended: wakes and dispatches the run queued behind it, if any. A failure costs the recheck. */
export async function wakeSingletonSuccessor(rt: EngineRuntime, run: RunRecord): Promise<void> {
  const chain = parseChainKey(run.idempotencyKey);
  if (chain === undefined || chain.kind !== KIND) return;
  try {
    const next = await rt.store.runs.findByIdempotencyKey(run.workflow, chainKey({ workflow: run.workflow, kind: KIND, key: chain.key }, run.id));
    if (next === undefined || isTerminalRunStatus(next.status)) return;
    await rt.store.runs.wake(next.id, rt.clock.now());
    await rt.dispatchRun(next);
  } catch (error) {
    rt.logger.warn(
      { runId: run.id, workflow: run.workflow, workerId: rt.workerId, err: error },
      `Run ${run.id}: waking the singleton run queued behind it failed; it looks again at its recheck`,
    );
  }
}

/** True for a run of a singleton chain (`retryRun` refuses them). */
export function isSingletonRun(run: RunRecord): boolean {
  return parseChainKey(run.idempotencyKey)?.kind === KIND;
}
