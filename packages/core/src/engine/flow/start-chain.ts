import { CairnError } from '../../errors/cairn-error.js';
import type { Json } from '../../model/json.js';
import type { NewRun, RunRecord } from '../../model/run.js';
import type { SlotStore } from '../../store/workflow-store.js';
import { keyOfInput } from './flow-keys.js';
import type { EngineRuntime } from '../engine-runtime.js';

// The reserved namespace of start chains, in idempotency keys, event names and event keys: U+0001
// opens no key or name a user may give (the engine refuses them), so what starts with it is ours.
const RESERVED = '\u0001';
const AFTER = ':after:';

/** The longest key of a singleton, debounce or batch start, in UTF-16 code units: it is stored inside the run's idempotency key. */
export const MAX_START_KEY = 256;

/** A slot holder's expiry that never comes: the chain's pointer is moved, never left to expire. */
const NEVER = 32_503_680_000_000; // 3000-01-01

/** The fault site (a `stepKey` of `after-checkpoint`) between a chain run's creation and the move of the chain's pointer. */
export const CHAIN_CREATED = '\u0001start:created';

/** True when `value` (an idempotency key, an event name or key) lies in the namespace Cairn keeps for start chains. */
export function isReserved(value: string): boolean {
  return value.startsWith(RESERVED);
}

/**
 * A chain: the runs of one workflow started with one `kind` (`singleton`, `debounce/<period>`,
 * `batch/<maxSize>/<maxWait>`: no `:`) and one key, in the order the store's idempotency index
 * put them. Each run is created with the idempotency key "after <its predecessor>", so of any
 * starts that see the same newest run exactly one creates its successor, and the others walk on
 * to it.
 */
export interface Chain {
  workflow: string;
  kind: string;
  key: string;
}

/** The idempotency key of the run that follows `predecessor` (`''`: the first run) in the chain. */
export function chainKey(chain: Chain, predecessor: string): string {
  return `${RESERVED}${chain.kind}:${chain.key.length}:${chain.key}${AFTER}${predecessor}`;
}

/** The chain (kind, key) and predecessor of a run, from its idempotency key; `undefined` for any other run. */
export function parseChainKey(idempotencyKey: string | undefined): { kind: string; key: string; predecessor: string } | undefined {
  if (idempotencyKey === undefined || !idempotencyKey.startsWith(RESERVED)) return undefined;
  const kindEnd = idempotencyKey.indexOf(':');
  const lengthEnd = idempotencyKey.indexOf(':', kindEnd + 1);
  const length = Number(idempotencyKey.slice(kindEnd + 1, lengthEnd));
  const key = idempotencyKey.slice(lengthEnd + 1, lengthEnd + 1 + length);
  return { kind: idempotencyKey.slice(1, kindEnd), key, predecessor: idempotencyKey.slice(lengthEnd + 1 + length + AFTER.length) };
}

/** The key of a start (a workflow default may compute it from the input, deterministically). */
export function startKey(what: string, key: string | ((input: Json) => string), input: Json): string {
  return typeof key === 'string' ? key : keyOfInput(what, key, input, MAX_START_KEY);
}

/** The store's slots, which keep each chain's pointer; a store without them refuses these starts. */
export function chainSlots(rt: EngineRuntime, option: string): SlotStore {
  const slots = rt.store.slots;
  if (slots === undefined) {
    throw new CairnError('INVALID_INPUT', `startRun ${option}: store ${rt.store.name} has no slots to keep the line of starts with`, {
      data: { argument: `startRun ${option}`, store: rt.store.name },
    });
  }
  return slots;
}

/**
 * Where a start stands in its chain: the newest run (`undefined` when the chain is empty) and
 * what to create next. A pointer (the holder of one slot, `o:`) saves walking the chain from its
 * start: it may lag behind (a crash between a create and its move), never point past the end.
 */
export class ChainWalk {
  private readonly passed: string[] = [];
  private readonly pointer: string;
  private predecessor = '';
  /** The newest run found (read lazily when the pointer named it). */
  private newest: RunRecord | undefined;

  constructor(
    private readonly rt: EngineRuntime,
    private readonly slots: SlotStore,
    readonly chain: Chain,
  ) {
    this.pointer = `o:${chain.workflow.length}:${chain.workflow}:${chain.kind}:${chain.key}`;
  }

  /** Walks from the pointer to the newest run of the chain; returns it (`undefined`: empty chain). */
  async toEnd(now: number): Promise<RunRecord | undefined> {
    if (this.predecessor === '' && this.passed.length === 0) {
      this.predecessor = (await this.slots.inspect(this.pointer, now)).holders[0]?.holder ?? '';
      this.newest = undefined;
    }
    for (;;) {
      const next = await this.rt.store.runs.findByIdempotencyKey(this.chain.workflow, chainKey(this.chain, this.predecessor));
      if (next === undefined) break;
      this.passed.push(this.predecessor);
      this.predecessor = next.id;
      this.newest = next;
    }
    if (this.newest === undefined && this.predecessor !== '') this.newest = await this.rt.store.runs.get(this.predecessor);
    return this.newest;
  }

  /**
   * Creates the successor of the newest run; `undefined` when another start created it first (call
   * `toEnd` again: it walks on to that one).
   */
  async append(run: NewRun, now: number): Promise<RunRecord | undefined> {
    const result = await this.rt.store.runs.create({ ...run, idempotencyKey: chainKey(this.chain, this.predecessor) }, now);
    if (!result.created) return undefined;
    this.rt.faults.hit({ point: 'after-checkpoint', runId: result.run.id, stepKey: CHAIN_CREATED });
    this.passed.push(this.predecessor);
    this.predecessor = result.run.id;
    this.newest = result.run;
    await this.movePointer(result.run);
    return result.run;
  }

  /**
   * Frees the pointer from the runs this walk passed, then points it at `to`. Best effort: a
   * refusal (another start moved it further meanwhile) or a failure leaves it behind, never ahead.
   */
  async movePointer(to: RunRecord): Promise<void> {
    const now = this.rt.clock.now();
    try {
      for (const holder of this.passed) if (holder !== '' && holder !== to.id) await this.slots.release(this.pointer, holder, now);
      this.passed.length = 0;
      await this.slots.acquire({ key: this.pointer, limit: 1, holder: to.id, expiresAt: NEVER }, now);
    } catch (error) {
      this.rt.logger.warn(
        { runId: to.id, workflow: to.workflow, workerId: this.rt.workerId, err: error },
        `start chain: moving the pointer ${JSON.stringify(this.pointer)} failed; the next start walks further`,
      );
    }
  }
}
