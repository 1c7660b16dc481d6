/** How a `GroupCommit` sends writes: alone, or several as one statement. */
export interface GroupCommitSender<W, R> {
  /** Sends one write as it went out before group commit (one statement); its result. */
  one(write: W): Promise<R>;
  /**
   * Sends `writes` (two or more) as ONE statement, hence one transaction: all of them are applied
   * or none. Resolves with one result per write, in the order given; rejects when the statement
   * failed (then nothing of it was applied, unless the connection broke during the commit).
   */
  many(writes: readonly W[]): Promise<R[]>;
  /**
   * Whether a failed `many` may be sent again write by write: the server refused the statement for
   * what one of its writes holds (a data or constraint error), so each write sent alone learns its
   * own outcome. False for everything else (a lost connection, a shutdown, a cancel): then every
   * write of the statement gets its error.
   */
  splittable(error: unknown): boolean;
  /** What a write weighs toward `maxWeight` (its payload bytes, say). */
  weight(write: W): number;
}

/** Limits of a `GroupCommit`. */
export interface GroupCommitLimits {
  /** Statements in flight at once. */
  slots: number;
  /** The most writes one statement carries. */
  maxWrites: number;
  /** The most weight one statement carries (a statement always takes at least one write). */
  maxWeight: number;
  /**
   * How many writes must be waiting for a statement to go out BESIDE one already in flight (on
   * another free slot); fewer wait for the statements in flight to end, and then go out together.
   * Infinity: a statement goes out only when none is in flight. With `maxWrites` 1 (no grouping)
   * it is not used: every write that finds a slot free goes out alone.
   */
  parallelFrom: number;
}

interface Waiting<W, R> {
  write: W;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit without a timer. A write that finds no statement in flight and none waiting goes
 * out at once, alone, exactly as it would without this class: nothing waits for company. Writes
 * that arrive while a statement is in flight wait in line; when the statements in flight end,
 * everything waiting (up to the limits) goes out as ONE statement, one transaction, one commit —
 * or, when at least `parallelFrom` writes wait, as several statements of at least that many writes
 * each on free slots, side by side (the server then runs them on several backends at once, and
 * their commits still share WAL flushes). A statement of several writes keeps its slot one
 * event-loop turn after its results were handed out (`setImmediate`, not a timer), so the
 * executions those results resumed write together again. So a lone writer never waits, and
 * writers that would have queued for the server anyway share a commit instead. Each caller gets
 * only its own write's result or error.
 */
export class GroupCommit<W, R> {
  private inFlight = 0;
  private readonly waiting: Waiting<W, R>[] = [];

  constructor(
    private readonly sender: GroupCommitSender<W, R>,
    private readonly limits: GroupCommitLimits,
  ) {}

  /** Sends `write`: alone at once when nothing is in flight, else with the writes waiting beside it. */
  submit(write: W): Promise<R> {
    const { slots, maxWrites } = this.limits;
    if (this.inFlight < slots && this.waiting.length === 0 && (this.inFlight === 0 || maxWrites === 1)) return this.alone(write);
    // A slot is free beside the statements in flight: the writes of this turn may be enough for a
    // statement of their own, which the end of the turn decides (`drain`).
    if (this.inFlight < slots && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ write, resolve, reject });
    });
  }

  private flushScheduled = false;
  private readonly flush = (): void => {
    this.flushScheduled = false;
    this.drain();
  };

  private async alone(write: W): Promise<R> {
    this.inFlight += 1;
    try {
      return await this.sender.one(write);
    } finally {
      this.inFlight -= 1;
      this.drain();
    }
  }

  // Fills free slots with the writes waiting: when nothing is in flight, all of them (as one
  // statement, or split into statements of at least `parallelFrom` writes); beside statements in
  // flight, only statements of at least `parallelFrom` writes.
  private drain(): void {
    const { slots, parallelFrom } = this.limits;
    while (this.inFlight < slots && this.waiting.length > 0) {
      const statements = Math.min(slots - this.inFlight, Math.floor(this.waiting.length / parallelFrom));
      if (this.inFlight > 0 && statements < 1) return;
      const batch = this.take(Math.ceil(this.waiting.length / Math.max(1, statements)));
      this.inFlight += 1;
      const release = () => {
        this.inFlight -= 1;
        this.drain();
      };
      // A statement of several writes resumed several executions, whose next writes come in the
      // callbacks of this turn of the event loop (the engine resumes an execution a macrotask after
      // its write): the slot is held until those have run, so the writes go out together instead
      // of the first alone and the rest behind it. After a lone write the slot frees at once, so
      // a writer on its own never waits.
      void this.send(batch).finally(() => {
        if (batch.length > 1) setImmediate(release);
        else release();
      });
    }
  }

  // The first writes waiting, at most `most` and within the limits.
  private take(most: number): Waiting<W, R>[] {
    let weight = 0;
    let n = 0;
    while (n < this.waiting.length && n < this.limits.maxWrites && n < most) {
      const w = this.sender.weight((this.waiting[n] as Waiting<W, R>).write);
      if (n > 0 && weight + w > this.limits.maxWeight) break;
      weight += w;
      n += 1;
    }
    return this.waiting.splice(0, n);
  }

  // Never rejects: every outcome goes to its own caller.
  private async send(batch: Waiting<W, R>[]): Promise<void> {
    if (batch.length === 1) {
      const only = batch[0] as Waiting<W, R>;
      await this.sender.one(only.write).then(only.resolve, only.reject);
      return;
    }
    let results: R[];
    try {
      results = await this.sender.many(batch.map((b) => b.write));
    } catch (error) {
      if (!this.sender.splittable(error)) {
        for (const b of batch) b.reject(error);
        return;
      }
      // The statement was refused for what some write holds, and nothing of it was applied: each
      // write alone, so only the one at fault fails.
      await Promise.all(batch.map((b) => this.sender.one(b.write).then(b.resolve, b.reject)));
      return;
    }
    for (let i = 0; i < batch.length; i++) (batch[i] as Waiting<W, R>).resolve(results[i] as R);
  }
}
