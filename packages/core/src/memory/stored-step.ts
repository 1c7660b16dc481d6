// How the memory store keeps a step and its attempts. The records of the store contract
// (`StepRecord`, `AttemptRecord`) are built only on the way out. Why: a finished run's steps are
// what the store holds for as long as it lives, and every major garbage collection marks them
// again. Kept as records — a step record, an attempt record per attempt in a second map under a
// composite-key string, each repeating the run id — they cost ~435 bytes per step (issue 18).
// Here a step recorded in one write (the inline step's path: attempt 1 finished, or running) is
// one object of ten fields: what steps of a run have in common (kind, attempt limit, worker, ...)
// sits in one `StepTraits` shared by them, and what few steps have in a `StepExtras` made on
// demand.
import { copyRecord } from '../store/copy-record.js';
import type { ErrorRecord } from '../model/error-record.js';
import type { Json } from '../model/json.js';
import type { AttemptRecord, AttemptStatus, NewStep, StepKind, StepRecord, StepStatus } from '../model/step.js';

/** One attempt of a stored step. `order`: when its number was first opened in the run (ties in the history). */
export class StoredAttempt {
  constructor(
    readonly attempt: number,
    readonly order: number,
    public status: AttemptStatus,
    readonly worker: string | undefined,
    readonly startedAt: number,
    public endedAt: number | undefined,
    public output: Json | undefined,
    public error: ErrorRecord | undefined,
  ) {}

  /** The attempt as the store contract gives it: a new object, its payloads deep copies. */
  toRecord(runId: string, stepKey: string): AttemptRecord {
    const record: AttemptRecord =
      this.worker === undefined
        ? { runId, stepKey, attempt: this.attempt, status: this.status, startedAt: this.startedAt }
        : { runId, stepKey, attempt: this.attempt, status: this.status, worker: this.worker, startedAt: this.startedAt };
    if (this.endedAt !== undefined) record.endedAt = this.endedAt;
    if (this.output !== undefined) record.output = copyRecord(this.output);
    if (this.error !== undefined) record.error = copyRecord(this.error);
    return record;
  }
}

/**
 * What a step shares with the other steps its run recorded: fixed when it is inserted. `first`:
 * the status attempt 1 got in the insert (`running`, or the finished attempt's), by `worker`;
 * `undefined` when the insert opened no attempt.
 */
export class StepTraits {
  constructor(
    readonly kind: StepKind,
    readonly maxAttempts: number,
    readonly queued: boolean,
    readonly fence: number | undefined,
    readonly first: AttemptStatus | undefined,
    readonly worker: string | undefined,
  ) {}

  matches(other: StepTraits): boolean {
    return (
      this.kind === other.kind &&
      this.maxAttempts === other.maxAttempts &&
      this.queued === other.queued &&
      this.fence === other.fence &&
      this.first === other.first &&
      this.worker === other.worker
    );
  }
}

/** What few steps have; `undefined` fields are the common case (see `StoredStep`'s getters). */
class StepExtras {
  name: string | undefined = undefined;
  attempt: number | undefined = undefined;
  updatedAt: number | undefined = undefined;
  error: ErrorRecord | undefined = undefined;
  wakeAt: number | undefined = undefined;
  childRunId: string | undefined = undefined;
  /** Every attempt, once one of them is not the insert's attempt 1 as it was written. */
  attempts: StoredAttempt[] | undefined = undefined;
}

/**
 * A stored step. Attempt 1 as the insert wrote it is held in `startedAt` and `order` (its status
 * and worker in `traits`, its end at `createdAt` when it was finished); any later change to the
 * step's attempts moves them to a list of `StoredAttempt`s.
 */
export class StoredStep {
  status: StepStatus;
  turn: number | undefined;
  output: Json | undefined;
  private startedAt: number | undefined;
  private extras: StepExtras | undefined = undefined;
  readonly key: string;
  readonly seq: number;
  readonly createdAt: number;
  readonly traits: StepTraits;
  private readonly order: number;

  /**
   * What `steps.insert` records (as `newStepRecord` builds it, `output` and `error` deep copies),
   * with attempt 1 as the insert opens it: running since `now` (status `running`), or finished at
   * `now` as `step.finishedAttempt` says. `traits` must match the step (see `traitsOf`); `order`:
   * the run's count of attempts opened before this one.
   */
  constructor(step: NewStep, now: number, traits: StepTraits, order: number) {
    this.key = step.key;
    this.seq = step.seq;
    this.status = step.status;
    this.turn = step.turn;
    this.output = step.output === undefined ? undefined : copyRecord(step.output);
    this.createdAt = now;
    this.traits = traits;
    this.order = order;
    if (step.name !== step.key) this.more().name = step.name;
    if (step.error !== undefined) this.more().error = copyRecord(step.error);
    if (step.wakeAt !== undefined) this.more().wakeAt = step.wakeAt;
    if (step.childRunId !== undefined) this.more().childRunId = step.childRunId;
    const done = step.status === 'running' ? undefined : step.finishedAttempt;
    this.startedAt = traits.first === undefined ? undefined : (done?.startedAt ?? now);
    // A finished attempt with a payload of its own is kept as a record from the start.
    if (done !== undefined && (done.output !== undefined || done.error !== undefined)) {
      const attempt = this.attemptsList()[0] as StoredAttempt;
      if (done.output !== undefined) attempt.output = copyRecord(done.output);
      if (done.error !== undefined) attempt.error = copyRecord(done.error);
    }
  }

  get name(): string {
    return this.extras?.name ?? this.key;
  }
  get attempt(): number {
    return this.extras?.attempt ?? 1;
  }
  set attempt(value: number) {
    if (value !== this.attempt) this.more().attempt = value;
  }
  get updatedAt(): number {
    return this.extras?.updatedAt ?? this.createdAt;
  }
  set updatedAt(value: number) {
    if (value !== this.updatedAt) this.more().updatedAt = value;
  }
  get error(): ErrorRecord | undefined {
    return this.extras?.error;
  }
  set error(value: ErrorRecord | undefined) {
    if (value !== undefined || this.extras !== undefined) this.more().error = value;
  }
  get wakeAt(): number | undefined {
    return this.extras?.wakeAt;
  }
  set wakeAt(value: number | undefined) {
    if (value !== undefined || this.extras !== undefined) this.more().wakeAt = value;
  }
  get childRunId(): string | undefined {
    return this.extras?.childRunId;
  }
  set childRunId(value: string | undefined) {
    if (value !== undefined || this.extras !== undefined) this.more().childRunId = value;
  }

  /** The step as the store contract gives it (the keys in `newStepRecord`'s order): a new object, its payloads deep copies. */
  toRecord(runId: string): StepRecord {
    const record: StepRecord = {
      runId,
      key: this.key,
      name: this.name,
      kind: this.traits.kind,
      seq: this.seq,
      status: this.status,
      attempt: this.attempt,
      maxAttempts: this.traits.maxAttempts,
      queued: this.traits.queued,
      createdAt: this.createdAt,
      updatedAt: this.updatedAt,
    };
    if (this.output !== undefined) record.output = copyRecord(this.output);
    const extras = this.extras;
    if (extras !== undefined) {
      if (extras.error !== undefined) record.error = copyRecord(extras.error);
      if (extras.wakeAt !== undefined) record.wakeAt = extras.wakeAt;
      if (extras.childRunId !== undefined) record.childRunId = extras.childRunId;
    }
    if (this.turn !== undefined) record.turn = this.turn;
    if (this.traits.fence !== undefined) record.fence = this.traits.fence;
    return record;
  }

  /** Attempt number `attempt`, if it was opened, as a record of this step that may be changed. */
  attemptNo(attempt: number): StoredAttempt | undefined {
    if (this.extras?.attempts === undefined && (this.traits.first === undefined || attempt !== 1)) return undefined;
    const all = this.attemptsList();
    // From the end: the attempt a transition closes is nearly always the last one opened.
    for (let i = all.length - 1; i >= 0; i -= 1) if ((all[i] as StoredAttempt).attempt === attempt) return all[i];
    return undefined;
  }

  /** Opens `fresh`: one record per attempt number, so opening a number that exists replaces it. */
  putAttempt(fresh: StoredAttempt): void {
    const all = this.attemptsList();
    const at = all.findIndex((a) => a.attempt === fresh.attempt);
    if (at === -1) all.push(fresh);
    else all[at] = fresh;
  }

  /** Its attempts, in the order their numbers were first opened (new objects while the insert's attempt 1 is all there is). */
  eachAttempt(): readonly StoredAttempt[] {
    const list = this.extras?.attempts;
    if (list !== undefined) return list;
    const first = this.insertedAttempt();
    return first === undefined ? [] : [first];
  }

  /** The attempts as a list that changes stay in (made from the insert's attempt 1 the first time). */
  private attemptsList(): StoredAttempt[] {
    const extras = this.more();
    if (extras.attempts === undefined) {
      const first = this.insertedAttempt();
      extras.attempts = first === undefined ? [] : [first];
      this.startedAt = undefined;
    }
    return extras.attempts;
  }

  /** Attempt 1 as the insert wrote it, while no change moved the attempts to a list. */
  private insertedAttempt(): StoredAttempt | undefined {
    const { first, worker } = this.traits;
    if (first === undefined || this.startedAt === undefined) return undefined;
    return new StoredAttempt(1, this.order, first, worker, this.startedAt, first === 'running' ? undefined : this.createdAt, undefined, undefined);
  }

  private more(): StepExtras {
    if (this.extras === undefined) this.extras = new StepExtras();
    return this.extras;
  }
}

/**
 * The traits of `step` as `steps.insert(…, fence, step, …)` records it: `last` (the traits of the
 * run's previous insert) when they match, so the steps of a run share one object.
 */
export function traitsOf(step: NewStep, fence: number | null | undefined, last: StepTraits | undefined): StepTraits {
  const first = step.status === 'running' ? 'running' : step.finishedAttempt?.status;
  const worker = step.status === 'running' ? step.worker : step.finishedAttempt?.worker;
  const traits = new StepTraits(step.kind, step.maxAttempts, step.queued ?? false, fence ?? undefined, first, worker);
  return last?.matches(traits) ? last : traits;
}
