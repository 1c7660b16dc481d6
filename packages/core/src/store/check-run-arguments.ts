import { invalidInput } from '../errors/invalid-input.js';
import { checkedCall as checked } from './checked-call.js';
import { checkPriority } from './check-slot-arguments.js';
import type { EndedRunQuery, NewRun, RunQuery, RunReopen, RunTransition } from '../model/run.js';
import type { RunStore } from './workflow-store.js';
import { str, optStr, num, optNum, fence, obj, strings } from './check-argument-types.js';

// `withArgumentChecks` for `runs`: new runs, queries, transitions, reopenings, deletes and tags.

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

export function checkedRuns(runs: RunStore): RunStore {
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
    ...(runs.promiseWake === undefined ? {} : { promiseWake: checkedPromiseWake(runs.promiseWake.bind(runs)) }),
    ...(runs.keepPromise === undefined ? {} : { keepPromise: checkedKeepPromise(runs.keepPromise.bind(runs)) }),
  };
}

function checkedPromiseWake(promiseWake: NonNullable<RunStore['promiseWake']>): NonNullable<RunStore['promiseWake']> {
  return (runId, at, now) =>
    checked(
      () => {
        str('runs.promiseWake', 'runId', runId);
        num('runs.promiseWake', 'at', at);
        num('runs.promiseWake', 'now', now);
      },
      () => promiseWake(runId, at, now),
    );
}

function checkedKeepPromise(keepPromise: NonNullable<RunStore['keepPromise']>): NonNullable<RunStore['keepPromise']> {
  return (runId, now) =>
    checked(
      () => {
        str('runs.keepPromise', 'runId', runId);
        num('runs.keepPromise', 'now', now);
      },
      () => keepPromise(runId, now),
    );
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
