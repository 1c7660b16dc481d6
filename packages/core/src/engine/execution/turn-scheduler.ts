import type { StepRecord } from '../../model/step.js';

// Recorded turns delivered without an event loop pass before one that takes it (see `scheduleDrain`).
const YIELD_EVERY = 256;

/** An outcome ready to be handed over: the number of its call, in call order. */
export interface TurnItem {
  readonly no: number;
}

/** Outcomes that workflow code may see in one turn, and what still holds the turn back. */
interface Batch<Item extends TurnItem> {
  /** Outcomes written (or being read) for this turn whose write has not completed yet. */
  pending: number;
  /**
   * Recorded steps delivered in this turn whose calls have not been replayed to an outcome yet
   * (made only for a turn the history recorded: a new outcome's turn waits for no key).
   */
  awaitedKeys: Set<string> | undefined;
  /** Outcomes ready to hand over, with the order their calls were made in. */
  ready: Item[];
}

/**
 * Hands primitive outcomes to workflow code turn by turn, so that concurrent branches see them in
 * the same order on every execution of a run.
 *
 * Why: the key of a call is given in call order, and with concurrent branches the call order
 * depends on the order in which earlier outcomes reached the code. That order is decided once, on
 * the first execution, and recorded: every outcome carries the turn (1, 2, ...) it is delivered in
 * (`StepRecord.turn`), fixed when its terminal record is written. A turn starts only when the code
 * has gone quiet (every microtask has run) and every outcome of that turn is ready; its outcomes are
 * then settled together, in call order. A replay delivers recorded outcomes in their recorded
 * turns, so the code makes the same calls in the same order and every call gets its own record.
 * Outcomes new to this execution are delivered only after every recorded turn.
 */
export class TurnScheduler<Item extends TurnItem> {
  /** The current turn: 0 while the handler's first synchronous run and its microtasks go on. */
  turn = 0;
  /** The highest turn the history recorded: outcomes new to this execution come after it. */
  readonly maxRecorded: number;
  /** True once the code went quiet after the last delivery, until the next one. */
  drained = false;
  private drainScheduled = false;
  private stopped = false;
  private readonly batches = new Map<number, Batch<Item>>();
  // Made once: a closure per turn was a visible share of a step's CPU (issue 18).
  private fastDrains = 0;
  private readonly tickDrain = (): void => {
    process.nextTick(this.drain);
  };
  private readonly drain = (): void => {
    this.busy.count -= 1;
    this.drainScheduled = false;
    this.drained = true;
    this.advance();
  };

  constructor(
    recorded: Iterable<StepRecord>,
    /** Hands one outcome to the code (settles its promise); called in call order within a turn. */
    private readonly settle: (item: Item) => void,
    /** Called when the code is quiet and no turn can start now. */
    private readonly onQuiet: () => void,
    /** Counts executions whose code is mid-turn, engine-wide (`Engine.turnsInProgress`). */
    private readonly busy: { count: number } = { count: 0 },
    /** Called after each turn's outcomes were settled. */
    private readonly onTurn: () => void = () => {},
  ) {
    let max = 0;
    for (const step of recorded) {
      if (step.turn === undefined) continue;
      max = Math.max(max, step.turn);
      const batch = this.batch(step.turn);
      (batch.awaitedKeys ??= new Set()).add(step.key);
    }
    this.maxRecorded = max;
  }

  /** The turn in which an outcome recorded now will be delivered; reserve it with `expect`. */
  nextTurn(): number {
    return Math.max(this.turn, this.maxRecorded) + 1;
  }

  /** An outcome for `turn` is on its way: that turn waits for it (`ready` or `cancel`). */
  expect(turn: number): void {
    this.batch(turn).pending += 1;
  }

  /** An expected outcome will not come (its call suspended or the execution ended). */
  cancel(turn: number): void {
    const batch = this.batches.get(turn);
    if (batch) batch.pending -= 1;
    this.advance();
  }

  /**
   * The outcome of call `item` is ready for `turn`. `expected`: it was announced with `expect`.
   * `key`: the recorded step it replays, which that turn waits for.
   */
  ready(turn: number, item: Item, expected: boolean, key: string | undefined): void {
    const batch = this.batch(turn);
    if (expected) batch.pending -= 1;
    if (key !== undefined) batch.awaitedKeys?.delete(key);
    batch.ready.push(item);
    this.advance();
  }

  /** Recorded steps the next turn still waits for (their outcome is not ready). */
  awaitedNext(): readonly string[] {
    return [...(this.batches.get(this.turn + 1)?.awaitedKeys ?? [])];
  }

  /**
   * True when the next turn has nothing on its way: no outcome expected or ready for it, and no
   * recorded step delivered in it.
   */
  nextIsEmpty(): boolean {
    const batch = this.batches.get(this.turn + 1);
    return batch === undefined || (batch.pending === 0 && batch.ready.length === 0 && (batch.awaitedKeys === undefined || batch.awaitedKeys.size === 0));
  }

  /** True when some turn still has outcomes expected or ready (a turn may yet start). */
  hasOutcomesComing(): boolean {
    for (const batch of this.batches.values()) if (batch.pending > 0 || batch.ready.length > 0) return true;
    return false;
  }

  /** Starts watching for quiet after the handler was called (turn 0). */
  begin(): void {
    this.scheduleDrain();
  }

  /**
   * The code was handed an outcome outside any turn (an error that took no turn): it may call
   * primitives in its continuations, so quiet is looked for again only after they ran.
   */
  resumed(): void {
    if (!this.stopped) this.scheduleDrain();
  }

  /** No more deliveries (the execution ended). */
  stop(): void {
    this.stopped = true;
    this.batches.clear();
  }

  /** Deliveries again, after `stop`, for a suspended execution resumed where it stopped (`Replay.reopen`). */
  restart(): void {
    this.stopped = false;
  }

  /** Starts the next turn if it can, else reports quiet. */
  advance(): void {
    if (this.stopped || !this.drained) return;
    const next = this.turn + 1;
    const batch = this.batches.get(next);
    if (batch && batch.pending === 0 && (batch.awaitedKeys === undefined || batch.awaitedKeys.size === 0) && batch.ready.length > 0) {
      this.batches.delete(next);
      this.turn = next;
      this.drained = false;
      // Settled in call order, in one synchronous pass: the continuations then run in that order.
      if (batch.ready.length > 1) batch.ready.sort((a, b) => a.no - b.no);
      for (const item of batch.ready) this.settle(item);
      this.onTurn();
      this.scheduleDrain();
      return;
    }
    this.onQuiet();
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    this.drained = false;
    this.busy.count += 1;
    // Workflow code only resumes when a turn settles its promises, so once the microtasks that a
    // turn started have run, the code is quiet until the next turn. While the history recorded the
    // next turn (a replay), quiet is seen without leaving the microtask checkpoint: a tick queued
    // from a microtask runs once the microtask queue is empty (decision 64), which saves the event
    // loop pass a `setImmediate` costs per recorded turn. Every `YIELD_EVERY` such turns, and for
    // every turn new to this execution, the drain waits for a macrotask, so a long replay still
    // lets timers and I/O run.
    if (this.turn < this.maxRecorded && ++this.fastDrains % YIELD_EVERY !== 0) queueMicrotask(this.tickDrain);
    else setImmediate(this.drain);
  }

  private batch(turn: number): Batch<Item> {
    let batch = this.batches.get(turn);
    if (!batch) {
      batch = { pending: 0, awaitedKeys: undefined, ready: [] };
      this.batches.set(turn, batch);
    }
    return batch;
  }
}
