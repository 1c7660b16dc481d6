import { copyRecord } from '../store/copy-record.js';
import { createMemorySignals } from './memory-signals.js';
import { createMemorySlots } from './memory-slots.js';
import { createMemoryPauses } from './memory-pauses.js';
import { createMemoryBulk } from './memory-bulk.js';
import { type StepTraits, StoredAttempt, StoredStep, traitsOf } from './stored-step.js';
import { CairnError } from '../errors/cairn-error.js';
import type { EventRecord } from '../model/event.js';
import type { StreamEntry } from '../model/stream.js';
import { decideStreamAppend } from '../store/stream-append.js';
import type { Json } from '../model/json.js';
import { isTerminalRunStatus } from '../model/run.js';
import type {
  DeleteCondition,
  DueRun,
  EndedRun,
  EndedRunPage,
  EndedRunQuery,
  NewRun,
  RunPage,
  RunQuery,
  RunRecord,
  RunReopen,
  RunTransition,
  TagWrite,
} from '../model/run.js';
import { decideTagWrite, mergeTags } from '../store/tag-write.js';
import { toRunSummary } from '../store/run-summary.js';
import { matchesRunQuery } from '../store/matches-run-query.js';
import { reopenedRun } from '../store/reopened-run.js';
import { decodeEndedCursor, encodeEndedCursor } from '../store/ended-cursor.js';
import type { NewStep, StepTransition } from '../model/step.js';
import type { VersionRecord, VersionStatus } from '../model/version.js';
import type { ScheduleRecord } from '../model/schedule.js';
import { decodeRunCursor, encodeRunCursor, normaliseListLimit } from '../store/run-cursor.js';
import { withArgumentChecks } from '../store/check-store-arguments.js';
import { checkWritableRun } from '../store/check-writable-run.js';
import { runNotFound } from '../store/write-rejections.js';
import type { Fence, WorkflowStore } from '../store/workflow-store.js';

// What the store holds per run. The maps a run may never use are made on first write: three empty
// maps were ~550 bytes of every finished run (issue 18).
interface RunEntry {
  run: RunRecord;
  /** Its steps by key, each with its attempts (see `StoredStep`). */
  steps: Map<string, StoredStep>;
  /** Attempt numbers opened in the run so far: the next one's `StoredAttempt.order`. */
  attemptsOpened: number;
  /** The traits of the run's last step insert, which the next one shares when they match. */
  lastTraits: StepTraits | undefined;
  state: Map<string, Json> | undefined;
  /** The messages of each event name, in arrival order (`seq` = index + 1). */
  events: Map<string, EventRecord[]> | undefined;
  /** The message each idempotency key stored. */
  eventKeys: Map<string, EventRecord> | undefined;
  /** Each stream's entries in index order, the end marker last (see `StreamStore`). */
  streams?: Map<string, StreamEntry[]>;
}

// A run record loses a field by being rebuilt without it: `delete` of a field that is not the last
// one added turns the object into a dictionary (~830 bytes per finished run, issue 18).
function dropField(e: RunEntry, field: 'wakeAt' | 'lease'): void {
  if (!Object.hasOwn(e.run, field)) return;
  const { [field]: _dropped, ...rest } = e.run;
  e.run = rest;
}

// Every value is copied in and out (`copyRecord`: a deep copy, as structuredClone makes it) so a
// caller mutating what it got back can never change what the store holds — the same isolation a
// database gives.
const copy = copyRecord;

/** Options of `createMemoryStore`. */
export interface MemoryStoreOptions {
  /** Largest payload accepted, in bytes of UTF-8 JSON (default 16 MiB). */
  maxPayloadBytes?: number;
}

/** A map keyed by a pair of strings, as a map of maps (so no two pairs can share a key). */
class PairMap<V> {
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

/**
 * The reference implementation of the store contract, in process memory. Every method is atomic
 * because it runs synchronously between awaits; it passes the whole conformance suite. Data lives
 * as long as the object: use it for tests and development, not production.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): WorkflowStore {
  const runs = new Map<string, RunEntry>();
  // Composite keys are nested maps (workflow → key → value), never joined strings: a separator
  // could occur inside a name, and then two different pairs would share one key.
  const idempotency = new PairMap<string>();
  const versions = new PairMap<VersionRecord>();
  const schedules = new Map<string, ScheduleRecord>();
  // The tag index: tag key → value → the runs carrying it, so `list({ tags })` reads the runs of
  // its rarest tag, not every run.
  const tagIndex = new PairMap<Set<string>>();
  const indexTags = (runId: string, tags: RunRecord['tags'], add: boolean): void => {
    for (const key of Object.keys(tags ?? {})) {
      const value = (tags as Record<string, string>)[key] as string;
      let ids = tagIndex.get(key, value);
      if (add) {
        if (ids === undefined) tagIndex.set(key, value, (ids = new Set()));
        ids.add(runId);
      } else if (ids !== undefined) {
        ids.delete(runId);
        if (ids.size === 0) tagIndex.delete(key, value);
      }
    }
  };
  // The candidates of a query: the runs of its rarest tag, or every run.
  const candidates = (query: RunQuery): Iterable<RunEntry> => {
    if (query.tags === undefined) return runs.values();
    let rarest: Set<string> | undefined;
    for (const key of Object.keys(query.tags)) {
      const ids = tagIndex.get(key, query.tags[key] as string);
      if (ids === undefined) return [];
      if (rarest === undefined || ids.size < rarest.size) rarest = ids;
    }
    return [...(rarest ?? [])].map((id) => runs.get(id) as RunEntry);
  };

  const entry = (runId: string): RunEntry | undefined => runs.get(runId);

  // Fencing + terminal check shared by every write of an executing run.
  const writable = (runId: string, fence: Fence): RunEntry => {
    const e = runs.get(runId);
    checkWritableRun(runId, fence, e?.run);
    return e as RunEntry;
  };

  /** Opens attempt `attempt` of `step` (replacing a record of that number, which keeps its place in the history). */
  const openAttempt = (e: RunEntry, step: StoredStep, attempt: number, worker: string | undefined, startedAt: number): void => {
    const order = step.attemptNo(attempt)?.order ?? e.attemptsOpened++;
    step.putAttempt(new StoredAttempt(attempt, order, 'running', worker, startedAt, undefined, undefined, undefined));
  };

  const wakeEntry = (e: RunEntry, now: number) => {
    if (isTerminalRunStatus(e.run.status)) return;
    e.run.wakeAt = e.run.wakeAt === undefined ? now : Math.min(e.run.wakeAt, now);
    e.run.updatedAt = now;
  };

  // Arguments of the wrong runtime type are refused before they reach the maps, as on every backend.
  return withArgumentChecks({
    name: 'memory',
    capabilities: { multiProcess: false, maxPayloadBytes: options.maxPayloadBytes ?? 16 * 1024 * 1024, insertFinished: true },
    // Between engines sharing this object (the only "processes" a memory store has).
    signals: createMemorySignals(),

    runs: {
      async create(input: NewRun, now: number) {
        const idemKey = input.idempotencyKey;
        if (idemKey !== undefined) {
          const existingId = idempotency.get(input.workflow, idemKey);
          const existing = existingId === undefined ? undefined : runs.get(existingId);
          if (existing) return { run: copy(existing.run), created: false };
        }
        if (runs.has(input.id)) {
          throw new CairnError('INVALID_INPUT', `Run id ${input.id} already exists`, { data: { runId: input.id } });
        }
        const run: RunRecord = {
          id: input.id,
          workflow: input.workflow,
          version: input.version,
          input: copy(input.input),
          status: 'pending',
          fence: 0,
          cancelRequested: false,
          createdAt: now,
          updatedAt: now,
        };
        if (input.parent) run.parent = { ...input.parent };
        if (input.idempotencyKey !== undefined) run.idempotencyKey = input.idempotencyKey;
        if (input.wakeAt !== undefined) run.wakeAt = input.wakeAt;
        if (input.deadline !== undefined) run.deadline = input.deadline;
        if (input.traceContext !== undefined) run.traceContext = { ...input.traceContext };
        if (input.forkedFrom !== undefined) run.forkedFrom = { runId: input.forkedFrom.runId, stepKey: input.forkedFrom.stepKey };
        // 0 is the default priority: stored absent, as every backend reads it back.
        if (input.priority !== undefined && input.priority !== 0) run.priority = input.priority;
        if (input.tags !== undefined && Object.keys(input.tags).length > 0) run.tags = copy(input.tags);
        runs.set(run.id, { run, steps: new Map(), attemptsOpened: 0, lastTraits: undefined, state: undefined, events: undefined, eventKeys: undefined });
        if (idemKey !== undefined) idempotency.set(input.workflow, idemKey, run.id);
        indexTags(run.id, run.tags, true);
        return { run: copy(run), created: true };
      },

      async get(runId) {
        return copy(entry(runId)?.run);
      },

      async list(query: RunQuery): Promise<RunPage> {
        const limit = normaliseListLimit(query.limit);
        const after = query.cursor === undefined ? undefined : decodeRunCursor(query.cursor);
        const matches = [...candidates(query)]
          .map((e) => e.run)
          .filter((r) => matchesRunQuery(r, query, after))
          .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
        const page = matches.slice(0, limit);
        const last = page[page.length - 1];
        const result: RunPage = { runs: page.map((run) => toRunSummary(copy(run))) };
        if (matches.length > limit && last) result.nextCursor = encodeRunCursor(last);
        return result;
      },

      async claim(runId, owner, leaseMs, now) {
        const e = entry(runId);
        // A paused run is never claimed (see PauseStore): it waits for resumeRun.
        if (!e || isTerminalRunStatus(e.run.status) || e.run.paused !== undefined) return undefined;
        const lease = e.run.lease;
        if (lease && lease.owner !== owner && lease.expiresAt > now) return undefined;
        e.run.status = 'running';
        e.run.fence += 1;
        e.run.lease = { owner, expiresAt: now + leaseMs };
        dropField(e, 'wakeAt');
        e.run.updatedAt = now;
        return copy(e.run);
      },

      async renew(runId, fence, leaseMs, now) {
        const e = entry(runId);
        if (!e || e.run.fence !== fence || isTerminalRunStatus(e.run.status) || !e.run.lease) {
          throw new CairnError('LEASE_LOST', `Run ${runId}: lease with fence ${fence} is gone`, { data: { runId, fence } });
        }
        e.run.lease = { owner: e.run.lease.owner, expiresAt: now + leaseMs };
        e.run.updatedAt = now;
        return copy(e.run);
      },

      async transition(runId, fence, t: RunTransition, now) {
        const e = writable(runId, fence);
        if (!t.from.includes(e.run.status)) {
          throw new CairnError('RUN_CONFLICT', `Run ${runId} is ${e.run.status}, expected ${t.from.join('|')}`, {
            data: { runId, status: e.run.status },
          });
        }
        if (t.to !== 'running') dropField(e, 'lease');
        if (isTerminalRunStatus(t.to)) dropField(e, 'wakeAt');
        const run = e.run;
        run.status = t.to;
        run.updatedAt = now;
        if (t.to === 'waiting') {
          // A wake requested since the claim (claim cleared wakeAt) must not be lost.
          if (t.wakeAt !== undefined) run.wakeAt = run.wakeAt === undefined ? t.wakeAt : Math.min(run.wakeAt, t.wakeAt);
        } else if (isTerminalRunStatus(t.to)) {
          if (t.output !== undefined) run.output = copy(t.output);
          if (t.error !== undefined) run.error = copy(t.error);
        }
        return copy(run);
      },

      async wake(runId, now) {
        const e = entry(runId);
        if (e) wakeEntry(e, now);
      },

      async requestCancel(runId, now, reason) {
        const e = entry(runId);
        if (!e) return undefined;
        if (!isTerminalRunStatus(e.run.status)) {
          // The first request's reason is kept.
          if (!e.run.cancelRequested && reason !== undefined) e.run.cancelReason = reason;
          e.run.cancelRequested = true;
          wakeEntry(e, now);
        }
        return copy(e.run);
      },

      async findDue(now, limit): Promise<DueRun[]> {
        const due: Array<DueRun & { at: number }> = [];
        for (const { run } of runs.values()) {
          if (run.paused !== undefined) continue;
          if ((run.status === 'pending' || run.status === 'waiting') && run.wakeAt !== undefined && run.wakeAt <= now) {
            due.push({ id: run.id, workflow: run.workflow, reason: 'wake', at: run.wakeAt });
          } else if (run.status === 'running' && run.lease && run.lease.expiresAt <= now) {
            due.push({ id: run.id, workflow: run.workflow, reason: 'lease-expired', at: run.lease.expiresAt });
          }
        }
        return due
          .sort((a, b) => a.at - b.at)
          .slice(0, limit)
          .map(({ id, workflow, reason }) => ({ id, workflow, reason }));
      },

      async findByIdempotencyKey(workflow, idempotencyKey) {
        const id = idempotency.get(workflow, idempotencyKey);
        return id === undefined ? undefined : copy(runs.get(id)?.run);
      },

      async reopen(runId, reopen: RunReopen, now) {
        const e = entry(runId);
        if (!e) throw runNotFound(runId);
        if ((e.run.status !== 'failed' && e.run.status !== 'cancelled') || e.run.fence !== reopen.fence) {
          throw new CairnError(
            'RUN_CONFLICT',
            `Run ${runId} is ${e.run.status} (fence ${e.run.fence}); only a failed or cancelled run at fence ${reopen.fence} can be reopened`,
            {
              data: { runId, status: e.run.status },
            },
          );
        }
        // A step's attempts go with it.
        for (const key of reopen.forget) e.steps.delete(key);
        e.run = reopenedRun(e.run, reopen, now);
        return copy(e.run);
      },

      async listEnded(query: EndedRunQuery): Promise<EndedRunPage> {
        const after = query.cursor === undefined ? undefined : decodeEndedCursor(query.cursor);
        const matches = [...runs.values()]
          .map((e) => e.run)
          .filter(
            (r) =>
              r.status === query.status &&
              r.updatedAt < query.updatedBefore &&
              (after === undefined || r.updatedAt > after.at || (r.updatedAt === after.at && r.id > after.id)),
          )
          .sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const batch: EndedRun[] = matches
          .slice(0, query.limit)
          .map((r) => ({ id: r.id, workflow: r.workflow, status: r.status, updatedAt: r.updatedAt, ...(r.parent ? { parent: { ...r.parent } } : {}) }));
        const last = batch[batch.length - 1];
        return matches.length > query.limit && last ? { runs: batch, nextCursor: encodeEndedCursor({ at: last.updatedAt, id: last.id }) } : { runs: batch };
      },

      async delete(runId, condition?: DeleteCondition) {
        const e = entry(runId);
        if (!e) return false;
        if (condition && (!condition.statuses.includes(e.run.status) || !(e.run.updatedAt < condition.updatedBefore))) return false;
        runs.delete(runId);
        if (e.run.idempotencyKey !== undefined) idempotency.delete(e.run.workflow, e.run.idempotencyKey);
        indexTags(runId, e.run.tags, false);
        return true;
      },

      async setTags(runId, fence, write: TagWrite) {
        const e = writable(runId, fence);
        if (!decideTagWrite(runId, e.run.tagWrites, write)) return { applied: false };
        indexTags(runId, e.run.tags, false);
        e.run.tags = mergeTags(e.run.tags, write.tags);
        e.run.tagWrites = write.seq + 1;
        indexTags(runId, e.run.tags, true);
        return { applied: true };
      },
    },

    streams: {
      async append(runId, fence, entry, now) {
        const e = writable(runId, fence);
        e.streams ??= new Map();
        const entries = e.streams.get(entry.stream) ?? [];
        const closed = entries[entries.length - 1]?.closed === true;
        if (decideStreamAppend(runId, closed ? entries.length - 1 : entries.length, closed, entry) === 'exists') return { created: false };
        entries.push(
          entry.close === true
            ? { stream: entry.stream, index: entry.index, closed: true, writtenAt: now }
            : { stream: entry.stream, index: entry.index, data: copy(entry.data), writtenAt: now },
        );
        e.streams.set(entry.stream, entries);
        return { created: true };
      },

      async read(runId, stream, from, limit) {
        const entries = entry(runId)?.streams?.get(stream) ?? [];
        return copy(entries.slice(from, from + limit));
      },

      async list(runId) {
        const streams = entry(runId)?.streams ?? new Map<string, StreamEntry[]>();
        return [...streams.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([stream, entries]) => {
            const closed = entries[entries.length - 1]?.closed === true;
            return { stream, length: closed ? entries.length - 1 : entries.length, closed };
          });
      },
    },

    steps: {
      async load(runId) {
        const e = entry(runId);
        if (!e) return [];
        return [...e.steps.values()].sort((a, b) => a.seq - b.seq).map((step) => step.toRecord(runId));
      },

      async insert(runId, fence, step: NewStep, now) {
        const e = writable(runId, fence);
        const existing = e.steps.get(step.key);
        if (existing) return { step: existing.toRecord(runId), created: false };
        // A running step opens attempt 1 in the same write; a step given `finishedAttempt` records it.
        const traits = traitsOf(step, fence, e.lastTraits);
        e.lastTraits = traits;
        const stored = new StoredStep(step, now, traits, traits.first === undefined ? -1 : e.attemptsOpened++);
        e.steps.set(step.key, stored);
        return { step: stored.toRecord(runId), created: true };
      },

      async transition(runId, fence, t: StepTransition, now) {
        const e = writable(runId, fence);
        const step = e.steps.get(t.key);
        if (!step || !t.from.status.includes(step.status) || step.attempt !== t.from.attempt) {
          throw new CairnError('STEP_CONFLICT', `Step ${t.key} of run ${runId} does not match the expected status/attempt`, {
            data: { runId, key: t.key, status: step?.status ?? null, attempt: step?.attempt ?? null },
          });
        }
        const nextAttempt = t.to.attempt ?? step.attempt;
        if (t.endAttempt) {
          const open = step.attemptNo(step.attempt);
          if (open) {
            open.status = t.endAttempt.status;
            open.endedAt = now;
            if (t.endAttempt.output !== undefined) open.output = copy(t.endAttempt.output);
            if (t.endAttempt.error !== undefined) open.error = copy(t.endAttempt.error);
          }
        }
        if (t.startAttempt) {
          // One record per (step, attempt number): opening a number that exists reopens it.
          openAttempt(e, step, nextAttempt, t.startAttempt.worker, now);
        }
        step.status = t.to.status;
        step.attempt = nextAttempt;
        step.updatedAt = now;
        if (t.to.output !== undefined) step.output = copy(t.to.output);
        if (t.to.error !== undefined) step.error = copy(t.to.error);
        if (t.to.wakeAt === null) step.wakeAt = undefined;
        else if (t.to.wakeAt !== undefined) step.wakeAt = t.to.wakeAt;
        if (t.to.childRunId !== undefined) step.childRunId = t.to.childRunId;
        if (t.to.turn !== undefined) step.turn = t.to.turn;
        return step.toRecord(runId);
      },
    },

    state: {
      async set(runId, fence, key, value, now) {
        const e = writable(runId, fence);
        (e.state ??= new Map()).set(key, copy(value));
        e.run.updatedAt = now;
      },
      async get(runId) {
        const e = entry(runId);
        // fromEntries defines own properties, so a key named `__proto__` survives like any other.
        return e?.state ? Object.fromEntries([...e.state].map(([k, v]) => [k, copy(v)])) : {};
      },
    },

    events: {
      async deliver(runId, name, payload, now, options) {
        const e = entry(runId);
        if (!e) throw runNotFound(runId);
        const key = options?.idempotencyKey;
        const earlier = key === undefined ? undefined : e.eventKeys?.get(key);
        if (earlier) return { delivered: false, duplicate: true, seq: earlier.seq };
        if (isTerminalRunStatus(e.run.status)) return { delivered: false, duplicate: false };
        const events = (e.events ??= new Map());
        const messages = events.get(name) ?? [];
        const record: EventRecord = { runId, name, seq: messages.length + 1, payload: copy(payload), deliveredAt: now };
        if (key !== undefined) {
          record.idempotencyKey = key;
          (e.eventKeys ??= new Map()).set(key, record);
        }
        messages.push(record);
        events.set(name, messages);
        wakeEntry(e, now);
        return { delivered: true, duplicate: false, seq: record.seq };
      },
      async get(runId, name, seq) {
        return copy(entry(runId)?.events?.get(name)?.[seq - 1]);
      },
    },

    versions: {
      async upsert(workflow, version, descriptor, now) {
        const existing = versions.get(workflow, version);
        const record: VersionRecord = existing
          ? { ...existing, descriptor: copy(descriptor), updatedAt: now }
          : { workflow, version, status: 'active', descriptor: copy(descriptor), createdAt: now, updatedAt: now };
        versions.set(workflow, version, record);
        return copy(record);
      },
      async get(workflow, version) {
        return copy(versions.get(workflow, version));
      },
      async list(workflow) {
        return [...versions.inner(workflow)].sort((a, b) => a.createdAt - b.createdAt).map(copy);
      },
      async setStatus(workflow, version, status: VersionStatus, now) {
        const existing = versions.get(workflow, version);
        if (!existing) throw new CairnError('VERSION_NOT_FOUND', `Version ${version} of ${workflow} is not registered`, { data: { workflow, version } });
        existing.status = status;
        existing.updatedAt = now;
        return copy(existing);
      },
    },

    schedules: {
      async create(schedule) {
        const existing = schedules.get(schedule.name);
        if (existing) return { schedule: copy(existing), created: false };
        const record = { ...copy(schedule), revision: 1 };
        schedules.set(record.name, record);
        return { schedule: copy(record), created: true };
      },
      async get(name) {
        return copy(schedules.get(name));
      },
      async list({ limit, after }) {
        // Sorted on each call: schedules are few, and a list is an operator's call, not a loop's.
        const names = [...schedules.keys()].filter((name) => after === undefined || name > after).sort();
        return names.slice(0, limit).map((name) => copy(schedules.get(name)!));
      },
      async update(schedule, expectedRevision) {
        const existing = schedules.get(schedule.name);
        if (!existing || existing.revision !== expectedRevision) return undefined;
        const record = { ...copy(schedule), revision: expectedRevision + 1 };
        schedules.set(record.name, record);
        return copy(record);
      },
      async delete(name) {
        return schedules.delete(name);
      },
      async findDue(now, limit) {
        // A scan is the memory store's index: it holds a test's or a dev process's few schedules.
        return [...schedules.values()]
          .filter((s) => s.dueAt !== null && s.dueAt <= now)
          .sort((a, b) => a.dueAt! - b.dueAt! || (a.name < b.name ? -1 : 1))
          .slice(0, limit)
          .map(copy);
      },
    },

    slots: createMemorySlots(),

    bulk: createMemoryBulk(),

    pauses: createMemoryPauses({
      get: (runId) => entry(runId)?.run,
      set: (runId, run) => {
        const e = entry(runId);
        if (e) e.run = run;
      },
      wake: (runId, now) => {
        const e = entry(runId);
        if (e) wakeEntry(e, now);
      },
    }),

    history: {
      async list(runId) {
        const e = entry(runId);
        if (!e) return [];
        const all: Array<{ step: StoredStep; attempt: StoredAttempt }> = [];
        for (const step of e.steps.values()) for (const attempt of step.eachAttempt()) all.push({ step, attempt });
        // `order` last: the order attempts were first opened in, as a map of them iterated.
        all.sort(
          (a, b) =>
            a.attempt.startedAt - b.attempt.startedAt || a.step.seq - b.step.seq || a.attempt.attempt - b.attempt.attempt || a.attempt.order - b.attempt.order,
        );
        return all.map(({ step, attempt }) => attempt.toRecord(runId, step.key));
      },
    },

    async close() {
      // Nothing to release: the maps go with the object.
    },
  });
}
