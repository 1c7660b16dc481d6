// What the memory store holds and the lookups its parts share: every run's entry (its record,
// steps, state, events and streams), the idempotency keys, the tag index, versions and schedules.
// Each part of the store (memory-runs.ts, memory-steps.ts, ...) is given one MemoryData.
import { copyRecord } from '../store/copy-record.js';
import type { EventRecord } from '../model/event.js';
import type { StreamEntry } from '../model/stream.js';
import type { Json } from '../model/json.js';
import { isTerminalRunStatus, type RunQuery, type RunRecord } from '../model/run.js';
import type { VersionRecord } from '../model/version.js';
import type { ScheduleRecord } from '../model/schedule.js';
import { checkWritableRun } from '../store/check-writable-run.js';
import type { Fence } from '../store/workflow-store.js';
import { type StepTraits, StoredAttempt, type StoredStep } from './stored-step.js';

// What the store holds per run. The maps a run may never use are made on first write: three empty
// maps were ~550 bytes of every finished run (issue 18).
export interface RunEntry {
  run: RunRecord;
  /** Its steps by key, each with its attempts (see `StoredStep`). */
  steps: Map<string, StoredStep>;
  /** Attempt numbers opened in the run so far: the next one's `StoredAttempt.order`. */
  attemptsOpened: number;
  /** The traits of the run's last step insert, which the next one shares when they match. */
  lastTraits: StepTraits | undefined;
  state: Map<string, Json> | undefined;
  /** The earliest attention promised by `runs.promiseWake` and not yet kept (apart from `wakeAt`). */
  promisedAt?: number;
  /** How many promises are outstanding (`promiseWake` adds one, `keepPromise` settles one). */
  promises?: number;
  /** The messages of each event name, in arrival order (`seq` = index + 1). */
  events: Map<string, EventRecord[]> | undefined;
  /** The message each idempotency key stored. */
  eventKeys: Map<string, EventRecord> | undefined;
  /** Each stream's entries in index order, the end marker last (see `StreamStore`). */
  streams?: Map<string, StreamEntry[]>;
}

// A run record loses a field by being rebuilt without it: `delete` of a field that is not the last
// one added turns the object into a dictionary (~830 bytes per finished run, issue 18).
export function dropField(e: RunEntry, field: 'wakeAt' | 'lease'): void {
  if (!Object.hasOwn(e.run, field)) return;
  const { [field]: _dropped, ...rest } = e.run;
  e.run = rest;
}

// Every value is copied in and out (`copyRecord`: a deep copy, as structuredClone makes it) so a
// caller mutating what it got back can never change what the store holds — the same isolation a
// database gives.
export const copy = copyRecord;

/** A map keyed by a pair of strings, as a map of maps (so no two pairs can share a key). */
export class PairMap<V> {
  private readonly outer = new Map<string, Map<string, V>>();

  get(a: string, b: string): V | undefined {
    return this.outer.get(a)?.get(b);
  }

  set(a: string, b: string, value: V): void {
    let inner = this.outer.get(a);
    if (!inner) this.outer.set(a, (inner = new Map()));
    inner.set(b, value);
  }

  delete(a: string, b: string): void {
    const inner = this.outer.get(a);
    if (!inner) return;
    inner.delete(b);
    if (inner.size === 0) this.outer.delete(a);
  }

  /** The values under `a`. */
  inner(a: string): IterableIterator<V> {
    return (this.outer.get(a) ?? new Map<string, V>()).values();
  }
}

/** The memory store's data, shared by its parts. */
export class MemoryData {
  readonly runs = new Map<string, RunEntry>();
  // Composite keys are nested maps (workflow → key → value), never joined strings: a separator
  // could occur inside a name, and then two different pairs would share one key.
  readonly idempotency = new PairMap<string>();
  readonly versions = new PairMap<VersionRecord>();
  readonly schedules = new Map<string, ScheduleRecord>();
  // The tag index: tag key → value → the runs carrying it, so `list({ tags })` reads the runs of
  // its rarest tag, not every run.
  private readonly tagIndex = new PairMap<Set<string>>();

  /** Adds the run to (or removes it from) the index entry of each of its tags. */
  indexTags(runId: string, tags: RunRecord['tags'], add: boolean): void {
    for (const key of Object.keys(tags ?? {})) {
      const value = (tags as Record<string, string>)[key] as string;
      let ids = this.tagIndex.get(key, value);
      if (add) {
        if (ids === undefined) this.tagIndex.set(key, value, (ids = new Set()));
        ids.add(runId);
      } else if (ids !== undefined) {
        ids.delete(runId);
        if (ids.size === 0) this.tagIndex.delete(key, value);
      }
    }
  }

  /** The candidates of a query: the runs of its rarest tag, or every run. */
  candidates(query: RunQuery): Iterable<RunEntry> {
    if (query.tags === undefined) return this.runs.values();
    let rarest: Set<string> | undefined;
    for (const key of Object.keys(query.tags)) {
      const ids = this.tagIndex.get(key, query.tags[key] as string);
      if (ids === undefined) return [];
      if (rarest === undefined || ids.size < rarest.size) rarest = ids;
    }
    return [...(rarest ?? [])].map((id) => this.runs.get(id) as RunEntry);
  }

  entry(runId: string): RunEntry | undefined {
    return this.runs.get(runId);
  }

  /** Fencing + terminal check shared by every write of an executing run. */
  writable(runId: string, fence: Fence): RunEntry {
    const e = this.runs.get(runId);
    checkWritableRun(runId, fence, e?.run);
    return e as RunEntry;
  }

  /** Opens attempt `attempt` of `step` (replacing a record of that number, which keeps its place in the history). */
  openAttempt(e: RunEntry, step: StoredStep, attempt: number, worker: string | undefined, startedAt: number): void {
    const order = step.attemptNo(attempt)?.order ?? e.attemptsOpened++;
    step.putAttempt(new StoredAttempt(attempt, order, 'running', worker, startedAt, undefined, undefined, undefined));
  }

  /** Makes a run that has not ended due now (or keeps an earlier due time). */
  wakeEntry(e: RunEntry, now: number): void {
    if (isTerminalRunStatus(e.run.status)) return;
    e.run.wakeAt = e.run.wakeAt === undefined ? now : Math.min(e.run.wakeAt, now);
    e.run.updatedAt = now;
  }
}
