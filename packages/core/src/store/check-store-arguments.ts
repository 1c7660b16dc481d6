import { invalidInput } from '../errors/invalid-input.js';
import { checkedCall as checked } from './checked-call.js';
import { checkPriority, withSlotArgumentChecks } from './check-slot-arguments.js';
import type { EndedRunQuery, NewRun, RunQuery, RunReopen, RunTransition } from '../model/run.js';
import type { NewStep, StepTransition } from '../model/step.js';
import type {
  BulkStore,
  EventStore,
  HistoryStore,
  PauseStore,
  RunStore,
  ScheduleStore,
  StateStore,
  StepStore,
  StreamStore,
  VersionStore,
  WorkflowStore,
} from './workflow-store.js';

// Each check throws INVALID_INPUT naming the operation and the argument; none reads anything.

function str(op: string, what: string, value: unknown): void {
  if (typeof value !== 'string') throw invalidInput(`${op}: ${what}`, 'must be a string', value);
}

function optStr(op: string, what: string, value: unknown): void {
  if (value !== undefined) str(op, what, value);
}

function num(op: string, what: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidInput(`${op}: ${what}`, 'must be a finite number', value);
}

function optNum(op: string, what: string, value: unknown): void {
  if (value !== undefined) num(op, what, value);
}

function fence(op: string, value: unknown, nullable: boolean): void {
  if (nullable && value === null) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw invalidInput(`${op}: fence`, nullable ? 'must be an integer or null' : 'must be an integer', value);
}

function obj(op: string, what: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidInput(`${op}: ${what}`, 'must be an object', value);
  return value as Record<string, unknown>;
}

function strings(op: string, what: string, value: unknown): void {
  if (!Array.isArray(value)) throw invalidInput(`${op}: ${what}`, 'must be an array of strings', value);
  for (const item of value) str(op, what, item);
}

function newRun(op: string, value: NewRun): void {
  const run = obj(op, 'run', value);
  str(op, 'run.id', run.id);
  str(op, 'run.workflow', run.workflow);
  str(op, 'run.version', run.version);
  optStr(op, 'run.idempotencyKey', run.idempotencyKey);
  optNum(op, 'run.wakeAt', run.wakeAt);
  optNum(op, 'run.deadline', run.deadline);
  if (run.priority !== undefined) checkPriority(`${op}: run.priority`, run.priority);
  if (run.tags !== undefined) tags(op, 'run.tags', run.tags);
  if (run.parent !== undefined) {
    const parent = obj(op, 'run.parent', run.parent);
    str(op, 'run.parent.runId', parent.runId);
    str(op, 'run.parent.stepKey', parent.stepKey);
  }
  if (run.forkedFrom !== undefined) {
    const origin = obj(op, 'run.forkedFrom', run.forkedFrom);
    str(op, 'run.forkedFrom.runId', origin.runId);
    str(op, 'run.forkedFrom.stepKey', origin.stepKey);
  }
}

function tags(op: string, what: string, value: unknown): void {
  const record = obj(op, what, value);
  for (const key of Object.keys(record)) str(op, `${what}[${JSON.stringify(key)}]`, record[key]);
}

function runQuery(op: string, value: RunQuery): void {
  const query = obj(op, 'query', value);
  optStr(op, 'query.workflow', query.workflow);
  if (Array.isArray(query.status)) strings(op, 'query.status', query.status);
  else optStr(op, 'query.status', query.status);
  optNum(op, 'query.createdAfter', query.createdAfter);
  optNum(op, 'query.createdBefore', query.createdBefore);
  optNum(op, 'query.limit', query.limit);
  optStr(op, 'query.cursor', query.cursor);
  optStr(op, 'query.parentRunId', query.parentRunId);
  optStr(op, 'query.idempotencyKey', query.idempotencyKey);
  if (query.tags !== undefined) tags(op, 'query.tags', query.tags);
  if (query.idempotencyKey !== undefined && query.workflow === undefined)
    throw invalidInput(`${op}: query.idempotencyKey`, 'needs query.workflow (keys are unique per workflow)', query.idempotencyKey);
}

function runReopen(op: string, value: RunReopen): void {
  const reopen = obj(op, 'reopen', value);
  fence(op, reopen.fence, false);
  strings(op, 'reopen.forget', reopen.forget);
  const retry = obj(op, 'reopen.retry', reopen.retry);
  num(op, 'reopen.retry.at', retry.at);
  str(op, 'reopen.retry.previousStatus', retry.previousStatus);
  if (reopen.deadline !== null) optNum(op, 'reopen.deadline', reopen.deadline);
}

function endedQuery(op: string, value: EndedRunQuery): void {
  const query = obj(op, 'query', value);
  str(op, 'query.status', query.status);
  num(op, 'query.updatedBefore', query.updatedBefore);
  num(op, 'query.limit', query.limit);
  optStr(op, 'query.cursor', query.cursor);
}

function runTransition(op: string, value: RunTransition): void {
  const t = obj(op, 'transition', value);
  strings(op, 'transition.from', t.from);
  str(op, 'transition.to', t.to);
  optNum(op, 'transition.wakeAt', t.wakeAt);
}

function newStep(op: string, value: NewStep): void {
  const step = obj(op, 'step', value);
  str(op, 'step.key', step.key);
  str(op, 'step.name', step.name);
  str(op, 'step.kind', step.kind);
  str(op, 'step.status', step.status);
  num(op, 'step.seq', step.seq);
  num(op, 'step.maxAttempts', step.maxAttempts);
  optStr(op, 'step.worker', step.worker);
  optStr(op, 'step.childRunId', step.childRunId);
  optNum(op, 'step.wakeAt', step.wakeAt);
  if (step.finishedAttempt !== undefined) finishedAttempt(op, step.status, step.finishedAttempt);
}

// A step recorded finished carries attempt 1's outcome; a live status would leave it open.
const FINISHED_STEP_STATUSES: ReadonlySet<unknown> = new Set(['succeeded', 'failed', 'retry_wait']);
const FINISHED_ATTEMPT_STATUSES: ReadonlySet<unknown> = new Set(['succeeded', 'failed', 'abandoned']);

function finishedAttempt(op: string, stepStatus: unknown, value: unknown): void {
  const attempt = obj(op, 'step.finishedAttempt', value);
  if (!FINISHED_STEP_STATUSES.has(stepStatus))
    throw invalidInput(`${op}: step.status`, 'must be succeeded, failed or retry_wait with a finishedAttempt', stepStatus);
  if (!FINISHED_ATTEMPT_STATUSES.has(attempt.status))
    throw invalidInput(`${op}: step.finishedAttempt.status`, 'must be succeeded, failed or abandoned', attempt.status);
  str(op, 'step.finishedAttempt.worker', attempt.worker);
  num(op, 'step.finishedAttempt.startedAt', attempt.startedAt);
}

function stepTransition(op: string, value: StepTransition): void {
  const t = obj(op, 'transition', value);
  str(op, 'transition.key', t.key);
  const from = obj(op, 'transition.from', t.from);
  strings(op, 'transition.from.status', from.status);
  num(op, 'transition.from.attempt', from.attempt);
  const to = obj(op, 'transition.to', t.to);
  str(op, 'transition.to.status', to.status);
  optNum(op, 'transition.to.attempt', to.attempt);
  optStr(op, 'transition.to.childRunId', to.childRunId);
  if (to.wakeAt !== null) optNum(op, 'transition.to.wakeAt', to.wakeAt);
  if (t.startAttempt !== undefined) str(op, 'transition.startAttempt.worker', obj(op, 'transition.startAttempt', t.startAttempt).worker);
}

function checkedRuns(runs: RunStore): RunStore {
  return {
    create: (run, now) =>
      checked(
        () => {
          newRun('runs.create', run);
          num('runs.create', 'now', now);
        },
        () => runs.create(run, now),
      ),
    get: (runId) =>
      checked(
        () => {
          str('runs.get', 'runId', runId);
        },
        () => runs.get(runId),
      ),
    list: (query) =>
      checked(
        () => {
          runQuery('runs.list', query);
        },
        () => runs.list(query),
      ),
    claim: (runId, owner, leaseMs, now) =>
      checked(
        () => {
          str('runs.claim', 'runId', runId);
          str('runs.claim', 'owner', owner);
          num('runs.claim', 'leaseMs', leaseMs);
          num('runs.claim', 'now', now);
        },
        () => runs.claim(runId, owner, leaseMs, now),
      ),
    renew: (runId, f, leaseMs, now) =>
      checked(
        () => {
          str('runs.renew', 'runId', runId);
          fence('runs.renew', f, false);
          num('runs.renew', 'leaseMs', leaseMs);
          num('runs.renew', 'now', now);
        },
        () => runs.renew(runId, f, leaseMs, now),
      ),
    transition: (runId, f, t, now) =>
      checked(
        () => {
          str('runs.transition', 'runId', runId);
          fence('runs.transition', f, false);
          runTransition('runs.transition', t);
          num('runs.transition', 'now', now);
        },
        () => runs.transition(runId, f, t, now),
      ),
    wake: (runId, now) =>
      checked(
        () => {
          str('runs.wake', 'runId', runId);
          num('runs.wake', 'now', now);
        },
        () => runs.wake(runId, now),
      ),
    requestCancel: (runId, now, reason) =>
      checked(
        () => {
          str('runs.requestCancel', 'runId', runId);
          num('runs.requestCancel', 'now', now);
          optStr('runs.requestCancel', 'reason', reason);
        },
        () => (reason === undefined ? runs.requestCancel(runId, now) : runs.requestCancel(runId, now, reason)),
      ),
    findDue: (now, limit) =>
      checked(
        () => {
          num('runs.findDue', 'now', now);
          num('runs.findDue', 'limit', limit);
        },
        () => runs.findDue(now, limit),
      ),
    findByIdempotencyKey: (workflow, key) =>
      checked(
        () => {
          str('runs.findByIdempotencyKey', 'workflow', workflow);
          str('runs.findByIdempotencyKey', 'idempotencyKey', key);
        },
        () => runs.findByIdempotencyKey(workflow, key),
      ),
    reopen: (runId, reopen, now) =>
      checked(
        () => {
          str('runs.reopen', 'runId', runId);
          runReopen('runs.reopen', reopen);
          num('runs.reopen', 'now', now);
        },
        () => runs.reopen(runId, reopen, now),
      ),
    listEnded: (query) =>
      checked(
        () => {
          endedQuery('runs.listEnded', query);
        },
        () => runs.listEnded(query),
      ),
    delete: (runId, condition) =>
      checked(
        () => {
          str('runs.delete', 'runId', runId);
          if (condition !== undefined) {
            strings('runs.delete', 'condition.statuses', obj('runs.delete', 'condition', condition).statuses);
            num('runs.delete', 'condition.updatedBefore', condition.updatedBefore);
          }
        },
        () => (condition === undefined ? runs.delete(runId) : runs.delete(runId, condition)),
      ),
    ...(runs.deleteMany === undefined ? {} : { deleteMany: checkedDeleteMany(runs.deleteMany.bind(runs)) }),
    ...(runs.setTags === undefined ? {} : { setTags: checkedSetTags(runs.setTags.bind(runs)) }),
  };
}

/** The largest batch `runs.deleteMany` takes. */
const DELETE_MANY_LIMIT = 1000;

function checkedDeleteMany(deleteMany: NonNullable<RunStore['deleteMany']>): NonNullable<RunStore['deleteMany']> {
  return (runIds, condition) =>
    checked(
      () => {
        strings('runs.deleteMany', 'runIds', runIds);
        if (runIds.length > DELETE_MANY_LIMIT) throw invalidInput('runs.deleteMany: runIds', `must hold at most ${DELETE_MANY_LIMIT} ids`, runIds.length);
        strings('runs.deleteMany', 'condition.statuses', obj('runs.deleteMany', 'condition', condition).statuses);
        num('runs.deleteMany', 'condition.updatedBefore', condition.updatedBefore);
      },
      () => deleteMany(runIds, condition),
    );
}

function checkedSetTags(setTags: NonNullable<RunStore['setTags']>): NonNullable<RunStore['setTags']> {
  return (runId, f, write, now) =>
    checked(
      () => {
        str('runs.setTags', 'runId', runId);
        fence('runs.setTags', f, false);
        const w = obj('runs.setTags', 'write', write);
        if (typeof w.seq !== 'number' || !Number.isSafeInteger(w.seq) || w.seq < 0)
          throw invalidInput('runs.setTags: write.seq', 'must be an integer >= 0', w.seq);
        tags('runs.setTags', 'write.tags', w.tags);
        num('runs.setTags', 'now', now);
      },
      () => setTags(runId, f, write, now),
    );
}

function checkedSteps(steps: StepStore): StepStore {
  return {
    load: (runId) =>
      checked(
        () => {
          str('steps.load', 'runId', runId);
        },
        () => steps.load(runId),
      ),
    // The two writes of every step, checked as `checked` does but without its two closures per
    // call (a visible share of an inline step's CPU on the memory store, issue 18).
    insert: (runId, f, step, now) => {
      try {
        str('steps.insert', 'runId', runId);
        fence('steps.insert', f, true);
        newStep('steps.insert', step);
        num('steps.insert', 'now', now);
      } catch (error) {
        return Promise.reject(error);
      }
      return steps.insert(runId, f, step, now);
    },
    transition: (runId, f, t, now) => {
      try {
        str('steps.transition', 'runId', runId);
        fence('steps.transition', f, true);
        stepTransition('steps.transition', t);
        num('steps.transition', 'now', now);
      } catch (error) {
        return Promise.reject(error);
      }
      return steps.transition(runId, f, t, now);
    },
  };
}

function checkedState(state: StateStore): StateStore {
  return {
    set: (runId, f, key, value, now) =>
      checked(
        () => {
          str('state.set', 'runId', runId);
          fence('state.set', f, true);
          str('state.set', 'key', key);
          num('state.set', 'now', now);
        },
        () => state.set(runId, f, key, value, now),
      ),
    get: (runId) =>
      checked(
        () => {
          str('state.get', 'runId', runId);
        },
        () => state.get(runId),
      ),
  };
}

function checkedEvents(events: EventStore): EventStore {
  return {
    deliver: (runId, name, payload, now, options) =>
      checked(
        () => {
          str('events.deliver', 'runId', runId);
          str('events.deliver', 'name', name);
          num('events.deliver', 'now', now);
          if (options !== undefined) optStr('events.deliver', 'options.idempotencyKey', obj('events.deliver', 'options', options).idempotencyKey);
        },
        () => (options === undefined ? events.deliver(runId, name, payload, now) : events.deliver(runId, name, payload, now, options)),
      ),
    get: (runId, name, seq) =>
      checked(
        () => {
          str('events.get', 'runId', runId);
          str('events.get', 'name', name);
          if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw invalidInput('events.get: seq', 'must be an integer from 1', seq);
        },
        () => events.get(runId, name, seq),
      ),
  };
}

function index(op: string, what: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw invalidInput(`${op}: ${what}`, 'must be an integer from 0', value);
}

function checkedStreams(streams: StreamStore): StreamStore {
  return {
    append: (runId, f, entry, now) =>
      checked(
        () => {
          str('streams.append', 'runId', runId);
          fence('streams.append', f, true);
          const e = obj('streams.append', 'entry', entry);
          str('streams.append', 'entry.stream', e.stream);
          index('streams.append', 'entry.index', e.index);
          if (e.close !== undefined && e.close !== true) throw invalidInput('streams.append: entry.close', 'must be true or absent', e.close);
          if (e.close === true && e.data !== undefined) throw invalidInput('streams.append: entry.data', 'must be absent on the end marker', e.data);
          if (e.close === undefined && e.data === undefined) throw invalidInput('streams.append: entry.data', 'must be a JSON value', e.data);
          num('streams.append', 'now', now);
        },
        () => streams.append(runId, f, entry, now),
      ),
    read: (runId, stream, from, limit) =>
      checked(
        () => {
          str('streams.read', 'runId', runId);
          str('streams.read', 'stream', stream);
          index('streams.read', 'from', from);
          if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
            throw invalidInput('streams.read: limit', 'must be an integer from 1 to 1000', limit);
        },
        () => streams.read(runId, stream, from, limit),
      ),
    list: (runId) =>
      checked(
        () => str('streams.list', 'runId', runId),
        () => streams.list(runId),
      ),
  };
}

function checkedVersions(versions: VersionStore): VersionStore {
  return {
    upsert: (workflow, version, descriptor, now) =>
      checked(
        () => {
          str('versions.upsert', 'workflow', workflow);
          str('versions.upsert', 'version', version);
          num('versions.upsert', 'now', now);
        },
        () => versions.upsert(workflow, version, descriptor, now),
      ),
    get: (workflow, version) =>
      checked(
        () => {
          str('versions.get', 'workflow', workflow);
          str('versions.get', 'version', version);
        },
        () => versions.get(workflow, version),
      ),
    list: (workflow) =>
      checked(
        () => {
          str('versions.list', 'workflow', workflow);
        },
        () => versions.list(workflow),
      ),
    setStatus: (workflow, version, status, now) =>
      checked(
        () => {
          str('versions.setStatus', 'workflow', workflow);
          str('versions.setStatus', 'version', version);
          str('versions.setStatus', 'status', status);
          num('versions.setStatus', 'now', now);
        },
        () => versions.setStatus(workflow, version, status, now),
      ),
  };
}

function checkedHistory(history: HistoryStore): HistoryStore {
  return {
    list: (runId) =>
      checked(
        () => {
          str('history.list', 'runId', runId);
        },
        () => history.list(runId),
      ),
  };
}

function scheduleRecord(op: string, value: unknown): void {
  const s = obj(op, 'schedule', value);
  for (const field of ['name', 'workflow', 'cron', 'timezone', 'overlap', 'catchUp', 'source'] as const) str(op, `schedule.${field}`, s[field]);
  for (const field of ['nextTickAt', 'catchUpLimit', 'skippedTicks', 'revision', 'createdAt', 'updatedAt'] as const) num(op, `schedule.${field}`, s[field]);
  if (s.dueAt !== null) num(op, 'schedule.dueAt', s.dueAt);
  if (typeof s.paused !== 'boolean') throw invalidInput(`${op}: schedule.paused`, 'must be a boolean', s.paused);
  if (!Array.isArray(s.firing)) throw invalidInput(`${op}: schedule.firing`, 'must be an array', s.firing);
}

function checkedSchedules(schedules: ScheduleStore): ScheduleStore {
  return {
    create: (schedule) =>
      checked(
        () => scheduleRecord('schedules.create', schedule),
        () => schedules.create(schedule),
      ),
    get: (name) =>
      checked(
        () => str('schedules.get', 'name', name),
        () => schedules.get(name),
      ),
    list: (options) =>
      checked(
        () => {
          const o = obj('schedules.list', 'options', options);
          if (typeof o.limit !== 'number' || !Number.isSafeInteger(o.limit) || o.limit < 1 || o.limit > 1000)
            throw invalidInput('schedules.list: options.limit', 'must be an integer from 1 to 1000', o.limit);
          optStr('schedules.list', 'options.after', o.after);
        },
        () => schedules.list(options),
      ),
    update: (schedule, expectedRevision) =>
      checked(
        () => {
          scheduleRecord('schedules.update', schedule);
          num('schedules.update', 'expectedRevision', expectedRevision);
        },
        () => schedules.update(schedule, expectedRevision),
      ),
    delete: (name) =>
      checked(
        () => str('schedules.delete', 'name', name),
        () => schedules.delete(name),
      ),
    findDue: (now, limit) =>
      checked(
        () => {
          num('schedules.findDue', 'now', now);
          num('schedules.findDue', 'limit', limit);
        },
        () => schedules.findDue(now, limit),
      ),
  };
}

function bulkRecord(op: string, value: unknown): void {
  const b = obj(op, 'operation', value);
  for (const field of ['id', 'action', 'state'] as const) str(op, `operation.${field}`, b[field]);
  for (const field of ['revision', 'pages', 'createdAt', 'updatedAt'] as const) num(op, `operation.${field}`, b[field]);
  obj(op, 'operation.filter', b.filter);
  obj(op, 'operation.counts', b.counts);
  optStr(op, 'operation.cursor', b.cursor);
  optStr(op, 'operation.reason', b.reason);
  if (!Array.isArray(b.failures)) throw invalidInput(`${op}: operation.failures`, 'must be an array', b.failures);
}

function checkedBulk(bulk: BulkStore): BulkStore {
  return {
    create: (operation) =>
      checked(
        () => bulkRecord('bulk.create', operation),
        () => bulk.create(operation),
      ),
    get: (id) =>
      checked(
        () => str('bulk.get', 'id', id),
        () => bulk.get(id),
      ),
    list: (options) =>
      checked(
        () => {
          const o = obj('bulk.list', 'options', options);
          if (typeof o.limit !== 'number' || !Number.isSafeInteger(o.limit) || o.limit < 1 || o.limit > 1000)
            throw invalidInput('bulk.list: options.limit', 'must be an integer from 1 to 1000', o.limit);
          optStr('bulk.list', 'options.before', o.before);
        },
        () => bulk.list(options),
      ),
    update: (operation, expectedRevision) =>
      checked(
        () => {
          bulkRecord('bulk.update', operation);
          num('bulk.update', 'expectedRevision', expectedRevision);
        },
        () => bulk.update(operation, expectedRevision),
      ),
    delete: (id) =>
      checked(
        () => str('bulk.delete', 'id', id),
        () => bulk.delete(id),
      ),
  };
}

const PAUSE_SCOPES: ReadonlySet<unknown> = new Set(['run', 'workflow']);

function pauseScope(op: string, what: string, value: unknown): void {
  if (!PAUSE_SCOPES.has(value)) throw invalidInput(`${op}: ${what}`, "must be 'run' or 'workflow'", value);
}

function checkedPauses(pauses: PauseStore): PauseStore {
  return {
    pauseRun: (runId, pause, now) =>
      checked(
        () => {
          str('pauses.pauseRun', 'runId', runId);
          const p = obj('pauses.pauseRun', 'pause', pause);
          pauseScope('pauses.pauseRun', 'pause.scope', p.scope);
          optStr('pauses.pauseRun', 'pause.reason', p.reason);
          num('pauses.pauseRun', 'now', now);
        },
        () => pauses.pauseRun(runId, pause, now),
      ),
    resumeRun: (runId, now, scope) =>
      checked(
        () => {
          str('pauses.resumeRun', 'runId', runId);
          num('pauses.resumeRun', 'now', now);
          if (scope !== undefined) pauseScope('pauses.resumeRun', 'scope', scope);
        },
        () => (scope === undefined ? pauses.resumeRun(runId, now) : pauses.resumeRun(runId, now, scope)),
      ),
    pauseWorkflow: (workflow, now, reason) =>
      checked(
        () => {
          str('pauses.pauseWorkflow', 'workflow', workflow);
          num('pauses.pauseWorkflow', 'now', now);
          optStr('pauses.pauseWorkflow', 'reason', reason);
        },
        () => (reason === undefined ? pauses.pauseWorkflow(workflow, now) : pauses.pauseWorkflow(workflow, now, reason)),
      ),
    resumeWorkflow: (workflow) =>
      checked(
        () => str('pauses.resumeWorkflow', 'workflow', workflow),
        () => pauses.resumeWorkflow(workflow),
      ),
    getWorkflowPause: (workflow) =>
      checked(
        () => str('pauses.getWorkflowPause', 'workflow', workflow),
        () => pauses.getWorkflowPause(workflow),
      ),
    listWorkflowPauses: () => pauses.listWorkflowPauses(),
  };
}

/**
 * Returns `store` with every method of its parts (`runs`, `steps`, `state`, `events`, `versions`,
 * `history`, `schedules`, and `slots`, `pauses` and `bulk` when present) checking the runtime types of its arguments
 * first: ids, names and keys must be strings, fences integers (or `null` where the contract allows it), times and limits
 * finite numbers, records objects with fields of those types. A wrong type rejects with
 * `CairnError('INVALID_INPUT')` naming the operation and argument, before the backend sees
 * anything — so an operator object such as `{ $gt: '' }` can never reach a query filter, and a
 * backend never fails with an untyped `TypeError`. Payloads (JSON values) are not checked here:
 * the engine serialises them. Everything else on `store` (name, capabilities, `close`, and
 * backend extras such as `init`) is kept as it is.
 *
 * Only types are checked, not content: which strings an identifier may be is the engine's rule
 * (`checkIdentifier`), and a store keeps every string it is given exactly. Two exceptions, whose
 * values every backend compares: `NewRun.priority` must be an integer from -1000 to 1000, and
 * `slots` checks content too (see `withSlotArgumentChecks`).
 */
export function withArgumentChecks<S extends WorkflowStore>(store: S): S {
  // A copy of the store's own properties (getters stay getters: MongoDB's capabilities are
  // computed) on the same prototype, with the parts replaced; the copy spreads like the original.
  const part = (value: unknown): PropertyDescriptor => ({ value, enumerable: true, writable: true, configurable: true });
  return Object.create(Object.getPrototypeOf(store) as object | null, {
    ...Object.getOwnPropertyDescriptors(store),
    runs: part(checkedRuns(store.runs)),
    steps: part(checkedSteps(store.steps)),
    state: part(checkedState(store.state)),
    events: part(checkedEvents(store.events)),
    versions: part(checkedVersions(store.versions)),
    history: part(checkedHistory(store.history)),
    schedules: part(checkedSchedules(store.schedules)),
    // Optional while backends adopt it: a store without slots keeps none.
    ...(store.slots === undefined ? {} : { slots: part(withSlotArgumentChecks(store.slots)) }),
    ...(store.streams === undefined ? {} : { streams: part(checkedStreams(store.streams)) }),
    ...(store.pauses === undefined ? {} : { pauses: part(checkedPauses(store.pauses)) }),
    ...(store.bulk === undefined ? {} : { bulk: part(checkedBulk(store.bulk)) }),
  }) as S;
}
