import { CairnError } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';

export type Outcome = { ok: unknown } | { error: string; data?: unknown };

export async function outcome(fn: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await fn() };
  } catch (err) {
    if (CairnError.is(err)) return { error: err.code, data: err.data };
    throw err;
  }
}

/**
 * A scripted life of several runs, applied to the memory reference store and to the Redis store
 * step by step: every answer (value or error code + data) must be the same.
 */
export function scenario(t0: number): Array<[string, (s: WorkflowStore) => Promise<unknown>]> {
  const at = (ms: number) => t0 + ms;
  return [
    ['create a', (s) => s.runs.create({ id: 'run-a', workflow: 'wf1', version: 'v1', input: { x: 1 }, idempotencyKey: 'k1', wakeAt: at(0) }, at(0))],
    ['create a again by key', (s) => s.runs.create({ id: 'run-a2', workflow: 'wf1', version: 'v1', input: { x: 2 }, idempotencyKey: 'k1' }, at(1))],
    [
      'same key, other workflow',
      (s) =>
        s.runs.create({ id: 'run-b', workflow: 'wf2', version: 'v1', input: null, idempotencyKey: 'k1', parent: { runId: 'run-a', stepKey: 'child' } }, at(2)),
    ],
    ['create c', (s) => s.runs.create({ id: 'run-c', workflow: 'wf1', version: 'v2', input: [1, 'two'] }, at(2))],
    ['duplicate id', (s) => s.runs.create({ id: 'run-c', workflow: 'wf1', version: 'v2', input: 0 }, at(3))],
    ['findDue at 0', (s) => s.runs.findDue(at(0), 10)],
    ['claim a by w1', (s) => s.runs.claim('run-a', 'w1', 1000, at(10))],
    ['claim a by w2 refused', (s) => s.runs.claim('run-a', 'w2', 1000, at(20))],
    ['claim a by w1 again', (s) => s.runs.claim('run-a', 'w1', 1000, at(30))],
    ['claim missing', (s) => s.runs.claim('nope', 'w1', 1000, at(30))],
    ['findDue before expiry', (s) => s.runs.findDue(at(500), 10)],
    ['findDue after expiry', (s) => s.runs.findDue(at(1100), 10)],
    ['claim a by w2 after expiry', (s) => s.runs.claim('run-a', 'w2', 1000, at(1100))],
    ['renew stale fence', (s) => s.runs.renew('run-a', 2, 1000, at(1200))],
    ['renew', (s) => s.runs.renew('run-a', 3, 5000, at(1200))],
    [
      'insert running step',
      (s) => s.steps.insert('run-a', 3, { key: 'charge', name: 'charge', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w2' }, at(1210)),
    ],
    ['insert again', (s) => s.steps.insert('run-a', 3, { key: 'charge', name: 'charge', kind: 'task', seq: 0, status: 'scheduled', maxAttempts: 9 }, at(1211))],
    [
      'insert stale fence',
      (s) => s.steps.insert('run-a', 2, { key: 'x', name: 'x', kind: 'task', seq: 5, status: 'running', maxAttempts: 1, worker: 'w' }, at(1212)),
    ],
    [
      'insert unfenced scheduled',
      (s) =>
        s.steps.insert(
          'run-a',
          null,
          { key: 'mail', name: 'mail', kind: 'task', seq: 1, status: 'scheduled', maxAttempts: 2, queued: true, wakeAt: at(9000) },
          at(1213),
        ),
    ],
    [
      'insert sleep',
      (s) => s.steps.insert('run-a', 3, { key: 'nap', name: 'nap', kind: 'sleep', seq: 2, status: 'waiting', maxAttempts: 1, wakeAt: at(7000) }, at(1214)),
    ],
    [
      'insert now (succeeded, output 0)',
      (s) => s.steps.insert('run-a', 3, { key: 'now', name: 'now', kind: 'now', seq: 3, status: 'succeeded', maxAttempts: 1, output: 0 }, at(1214)),
    ],
    [
      'step CAS wrong attempt',
      (s) => s.steps.transition('run-a', 3, { key: 'charge', from: { status: ['running'], attempt: 2 }, to: { status: 'failed' } }, at(1300)),
    ],
    [
      'step CAS wrong status',
      (s) => s.steps.transition('run-a', 3, { key: 'charge', from: { status: ['scheduled'], attempt: 1 }, to: { status: 'failed' } }, at(1300)),
    ],
    [
      'step CAS missing',
      (s) => s.steps.transition('run-a', 3, { key: 'ghost', from: { status: ['running'], attempt: 1 }, to: { status: 'failed' } }, at(1300)),
    ],
    [
      'step stale fence',
      (s) => s.steps.transition('run-a', 1, { key: 'charge', from: { status: ['running'], attempt: 1 }, to: { status: 'failed' } }, at(1300)),
    ],
    [
      'charge attempt 1 fails → retry_wait',
      (s) =>
        s.steps.transition(
          'run-a',
          3,
          {
            key: 'charge',
            from: { status: ['running'], attempt: 1 },
            to: { status: 'retry_wait', wakeAt: at(2000), error: { name: 'Error', message: 'boom' } },
            endAttempt: { status: 'failed', error: { name: 'Error', message: 'boom' } },
          },
          at(1300),
        ),
    ],
    [
      'charge attempt 2 starts',
      (s) =>
        s.steps.transition(
          'run-a',
          3,
          { key: 'charge', from: { status: ['retry_wait'], attempt: 1 }, to: { status: 'running', attempt: 2, wakeAt: null }, startAttempt: { worker: 'w2' } },
          at(2000),
        ),
    ],
    [
      'charge attempt 2 succeeds with false',
      (s) =>
        s.steps.transition(
          'run-a',
          3,
          {
            key: 'charge',
            from: { status: ['running'], attempt: 2 },
            to: { status: 'succeeded', output: false },
            endAttempt: { status: 'succeeded', output: false },
          },
          at(2100),
        ),
    ],
    [
      'mail picked (unfenced)',
      (s) =>
        s.steps.transition(
          'run-a',
          null,
          { key: 'mail', from: { status: ['scheduled'], attempt: 1 }, to: { status: 'running' }, startAttempt: { worker: 'q1' } },
          at(2100),
        ),
    ],
    [
      'mail succeeds with empty string',
      (s) =>
        s.steps.transition(
          'run-a',
          null,
          {
            key: 'mail',
            from: { status: ['running'], attempt: 1 },
            to: { status: 'succeeded', output: '', childRunId: 'kid' },
            endAttempt: { status: 'succeeded', output: '' },
          },
          at(2200),
        ),
    ],
    [
      'mail gets its delivery turn later (succeeded → succeeded)',
      (s) => s.steps.transition('run-a', 3, { key: 'mail', from: { status: ['succeeded'], attempt: 1 }, to: { status: 'succeeded', turn: 4 } }, at(2210)),
    ],
    [
      'a transition without turn keeps it',
      (s) => s.steps.transition('run-a', 3, { key: 'mail', from: { status: ['succeeded'], attempt: 1 }, to: { status: 'succeeded' } }, at(2220)),
    ],
    [
      'insert a finished step with its turn',
      (s) =>
        s.steps.insert(
          'run-a',
          3,
          { key: 'late', name: 'late', kind: 'task', seq: 4, status: 'succeeded', maxAttempts: 1, output: null, turn: 2_000_000 },
          at(2230),
        ),
    ],
    ['state set', (s) => s.state.set('run-a', 3, 'a.b', { deep: [1, { x: null }] }, at(2300))],
    ['state set hostile', (s) => s.state.set('run-a', null, '$weird "key" ✓ 😀', null, at(2300))],
    ['state set empty key', (s) => s.state.set('run-a', 3, '', 0, at(2300))],
    ['state set stale', (s) => s.state.set('run-a', 1, 'x', 1, at(2300))],
    ['state get', (s) => s.state.get('run-a')],
    ['state get missing run', (s) => s.state.get('nope')],
    ['wake while running', (s) => s.runs.wake('run-a', at(2400))],
    ['to waiting keeps the earlier wake', (s) => s.runs.transition('run-a', 3, { from: ['running'], to: 'waiting', wakeAt: at(7000) }, at(2500))],
    ['transition from wrong status', (s) => s.runs.transition('run-a', 3, { from: ['running'], to: 'completed' }, at(2500))],
    ['transition stale fence', (s) => s.runs.transition('run-a', 2, { from: ['waiting'], to: 'completed' }, at(2500))],
    ['findDue at 2500', (s) => s.runs.findDue(at(2500), 10)],
    ['deliver event', (s) => s.events.deliver('run-a', 'paid', { amount: 5 }, at(2600))],
    ['deliver again', (s) => s.events.deliver('run-a', 'paid', { amount: 6 }, at(2601))],
    ['deliver to missing', (s) => s.events.deliver('nope', 'paid', 1, at(2601))],
    ['deliver keyed', (s) => s.events.deliver('run-a', 'paid', { amount: 7 }, at(2602), { idempotencyKey: 'pay-7' })],
    ['deliver keyed again', (s) => s.events.deliver('run-a', 'other', { amount: 8 }, at(2603), { idempotencyKey: 'pay-7' })],
    ['get event', (s) => s.events.get('run-a', 'paid', 1)],
    ['get second message', (s) => s.events.get('run-a', 'paid', 2)],
    ['get keyed message', (s) => s.events.get('run-a', 'paid', 3)],
    ['get past the last message', (s) => s.events.get('run-a', 'paid', 4)],
    ['get missing event', (s) => s.events.get('run-a', 'nope', 1)],
    ['claim a (w3)', (s) => s.runs.claim('run-a', 'w3', 1000, at(2700))],
    ['cancel request', (s) => s.runs.requestCancel('run-a', at(2800))],
    ['cancel missing', (s) => s.runs.requestCancel('nope', at(2800))],
    ['to waiting no timer', (s) => s.runs.transition('run-a', 4, { from: ['running'], to: 'waiting' }, at(2900))],
    ['claim c', (s) => s.runs.claim('run-c', 'w9', 1000, at(3000))],
    ['complete c with null', (s) => s.runs.transition('run-c', 1, { from: ['running'], to: 'completed', output: null }, at(3100))],
    ['c terminal refuses transition', (s) => s.runs.transition('run-c', 1, { from: ['completed'], to: 'running' }, at(3200))],
    [
      'c terminal refuses step',
      (s) => s.steps.insert('run-c', 1, { key: 's', name: 's', kind: 'task', seq: 0, status: 'running', maxAttempts: 1, worker: 'w' }, at(3200)),
    ],
    ['c terminal refuses state', (s) => s.state.set('run-c', null, 'k', 1, at(3200))],
    ['c terminal event', (s) => s.events.deliver('run-c', 'e', 1, at(3200))],
    ['c terminal claim', (s) => s.runs.claim('run-c', 'w9', 1000, at(3200))],
    ['c terminal renew', (s) => s.runs.renew('run-c', 1, 1000, at(3200))],
    ['c terminal wake', (s) => s.runs.wake('run-c', at(3200))],
    ['c terminal cancel', (s) => s.runs.requestCancel('run-c', at(3200))],
    ['get c', (s) => s.runs.get('run-c')],
    ['claim b', (s) => s.runs.claim('run-b', 'w9', 1000, at(3300))],
    [
      'fail b',
      (s) =>
        s.runs.transition(
          'run-b',
          1,
          { from: ['running', 'waiting'], to: 'failed', error: { name: 'Error', message: 'no', code: 'X', data: { a: [] } } },
          at(3400),
        ),
    ],
    [
      'complete a with undefined',
      async (s) => {
        await s.runs.claim('run-a', 'w4', 1000, at(3500));
        return s.runs.transition('run-a', 5, { from: ['running'], to: 'completed' }, at(3600));
      },
    ],
    ['findDue at end', (s) => s.runs.findDue(at(100000), 10)],
    ['load steps', (s) => s.steps.load('run-a')],
    ['load steps of missing run', (s) => s.steps.load('nope')],
    ['history', (s) => s.history.list('run-a')],
    ['list all', (s) => s.runs.list({})],
    ['list wf1', (s) => s.runs.list({ workflow: 'wf1' })],
    ['list completed', (s) => s.runs.list({ status: 'completed' })],
    ['list statuses + wf', (s) => s.runs.list({ status: ['completed', 'failed'], workflow: 'wf2' })],
    ['list empty statuses', (s) => s.runs.list({ status: [] })],
    ['list time window', (s) => s.runs.list({ createdAfter: at(1), createdBefore: at(3) })],
    ['list page 1', (s) => s.runs.list({ limit: 2 })],
    ['list page 2', async (s) => s.runs.list({ limit: 2, cursor: (await s.runs.list({ limit: 2 })).nextCursor })],
    ['list bad limit', (s) => s.runs.list({ limit: 0 })],
    ['list bad cursor', (s) => s.runs.list({ cursor: 'nope' })],
    ['version upsert', (s) => s.versions.upsert('wf1', 'v1', { a: 1 }, at(10))],
    ['version upsert v2', (s) => s.versions.upsert('wf1', 'v2', { a: 2 }, at(10))],
    ['version upsert v1 again', (s) => s.versions.upsert('wf1', 'v1', { a: 3 }, at(20))],
    ['version retire', (s) => s.versions.setStatus('wf1', 'v1', 'retired', at(30))],
    ['version missing', (s) => s.versions.setStatus('wf1', 'v9', 'retired', at(30))],
    ['version get', (s) => s.versions.get('wf1', 'v1')],
    ['version get missing', (s) => s.versions.get('wf9', 'v1')],
    ['version list', (s) => s.versions.list('wf1')],
    ['delete a', (s) => s.runs.delete('run-a')],
    ['delete a again', (s) => s.runs.delete('run-a')],
    ['get a', (s) => s.runs.get('run-a')],
    ['key k1 free again', (s) => s.runs.create({ id: 'run-a3', workflow: 'wf1', version: 'v1', input: 1, idempotencyKey: 'k1' }, at(4000))],
    ['list after delete', (s) => s.runs.list({ workflow: 'wf1' })],
  ];
}
