import assert from 'node:assert/strict';
import { CairnError, createMemoryStore } from '@cairn/core';
import type { Json, RunStatus } from '@cairn/core';
import type { StepStatus, WorkflowStore } from '@cairn/core/backend';
import { freshStore, skipReason } from './support/server.js';
import { test } from 'node:test';

// The same random sequence of operations against the reference memory store and the MongoDB
// store: every result (value or error code) and the full state of every run must be identical.

const RUN_IDS = ['r0', 'r1', 'r2', 'r3'];
const OWNERS = ['a', 'b'];
const STEP_KEYS = ['s', 's#2', 'a.b', '$x', '', 'ü'];
const NAMES = ['e', 'e.f', '$e', ''];
const RUN_STATUSES: RunStatus[] = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'];
const STEP_STATUSES: StepStatus[] = ['scheduled', 'running', 'retry_wait', 'waiting', 'succeeded', 'failed'];
const VALUES: Json[] = [null, 0, false, '', 1, 'x', [], {}, { 'a.b': { $c: [null] } }];

function prng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
  const maybe = <T>(p: number, value: () => T): T | undefined => (next() < p ? value() : undefined);
  const subset = <T>(xs: readonly T[]): T[] => xs.filter(() => next() < 0.4);
  return { int, pick, maybe, subset };
}

type Op = { name: string; call: (store: WorkflowStore) => Promise<unknown> };

/** Builds the next random operation, peeking at the reference store to aim most of them well. */
function nextOp(r: ReturnType<typeof prng>, now: number, reference: WorkflowStore): Promise<Op> {
  return (async (): Promise<Op> => {
    const runId = r.pick(RUN_IDS);
    const run = await reference.runs.get(runId);
    const steps = await reference.steps.load(runId);
    const current = run?.fence ?? 0;
    const fence = r.pick([current, current, current, current - 1, current + 1]);
    const anyFence = r.pick([fence, fence, null] as const);
    const value = (): Json => r.pick(VALUES);
    const ops: Array<() => Op> = [
      () => {
        const run = {
          id: runId,
          workflow: r.pick(['w1', 'w2']),
          version: 'v',
          input: value(),
          ...(r.maybe(0.5, () => ({ idempotencyKey: r.pick(['k1', 'k.2']) })) ?? {}),
          ...(r.maybe(0.5, () => ({ wakeAt: now + r.int(50) })) ?? {}),
        };
        return { name: 'create', call: (s) => s.runs.create(run, now) };
      },
      () => {
        const owner = r.pick(OWNERS);
        const leaseMs = r.pick([10, 100]);
        return { name: 'claim', call: (s) => s.runs.claim(runId, owner, leaseMs, now) };
      },
      () => ({ name: 'renew', call: (s) => s.runs.renew(runId, fence, 100, now) }),
      () => {
        const from = run && r.int(10) < 7 ? [run.status, ...r.subset(RUN_STATUSES)] : r.subset(RUN_STATUSES);
        const to = r.int(10) < 8 ? r.pick(['running', 'waiting', 'pending'] as const) : r.pick(RUN_STATUSES);
        const t = {
          from,
          to,
          ...(r.maybe(0.5, () => ({ output: value() })) ?? {}),
          ...(r.maybe(0.2, () => ({ error: { name: 'E', message: 'm' } })) ?? {}),
          ...(r.maybe(0.5, () => ({ wakeAt: now + r.int(80) - 20 })) ?? {}),
        };
        return { name: 'runs.transition', call: (s) => s.runs.transition(runId, fence, t, now) };
      },
      () => ({ name: 'wake', call: (s) => s.runs.wake(runId, now) }),
      () => ({ name: 'requestCancel', call: (s) => s.runs.requestCancel(runId, now) }),
      () => {
        const really = r.int(4) === 0;
        return { name: 'delete', call: (s) => (really ? s.runs.delete(runId) : s.runs.get(runId)) };
      },
      () => {
        const key = r.pick(STEP_KEYS);
        const step = {
          key,
          name: key,
          kind: r.pick(['task', 'sleep'] as const),
          seq: STEP_KEYS.indexOf(key),
          status: r.pick(STEP_STATUSES),
          maxAttempts: 3,
          ...(r.maybe(0.3, () => ({ output: value() })) ?? {}),
          ...(r.maybe(0.3, () => ({ wakeAt: now + 5 })) ?? {}),
          ...(r.maybe(0.3, () => ({ turn: 1 + r.int(5) })) ?? {}),
          worker: 'w',
        };
        return { name: 'steps.insert', call: (s) => s.steps.insert(runId, anyFence, step, now) };
      },
      () => {
        const known = steps.length > 0 && r.int(10) < 7 ? r.pick(steps) : undefined;
        const attempt = known?.attempt ?? 1 + r.int(3);
        const start = r.maybe(0.4, () => ({ worker: r.pick(OWNERS) }));
        const t = {
          key: known?.key ?? r.pick(STEP_KEYS),
          from: { status: known ? [known.status, ...r.subset(STEP_STATUSES)] : r.subset(STEP_STATUSES), attempt },
          to: {
            status: r.pick(STEP_STATUSES),
            ...(start ? { attempt: attempt + 1 } : (r.maybe(0.2, () => ({ attempt: attempt + 1 })) ?? {})),
            ...(r.maybe(0.4, () => ({ output: value() })) ?? {}),
            ...(r.maybe(0.3, () => ({ wakeAt: r.pick([null, now + 7]) })) ?? {}),
            ...(r.maybe(0.1, () => ({ childRunId: 'c' })) ?? {}),
            ...(r.maybe(0.3, () => ({ turn: 1 + r.int(5) })) ?? {}),
          },
          ...(r.maybe(0.5, () => ({
            endAttempt: { status: r.pick(['succeeded', 'failed', 'abandoned'] as const), ...(r.maybe(0.5, () => ({ output: value() })) ?? {}) },
          })) ?? {}),
          ...(start ? { startAttempt: start } : {}),
        };
        return { name: 'steps.transition', call: (s) => s.steps.transition(runId, anyFence, t, now) };
      },
      () => {
        const [key, v] = [r.pick(STEP_KEYS), value()];
        return { name: 'state.set', call: (s) => s.state.set(runId, anyFence, key, v, now) };
      },
      () => {
        const [name, v] = [r.pick(NAMES), value()];
        return { name: 'events.deliver', call: (s) => s.events.deliver(runId, name, v, now) };
      },
      () => ({ name: 'findDue', call: async (s) => (await s.runs.findDue(now, 100)).sort((x, y) => (x.id < y.id ? -1 : 1)) }),
    ];
    return r.pick(ops)();
  })();
}

const outcome = async (op: Op, store: WorkflowStore) => {
  try {
    return { value: await op.call(store) };
  } catch (err) {
    if (!CairnError.is(err)) throw err;
    return { error: err.code };
  }
};

/** Everything observable about the runs. */
async function snapshot(store: WorkflowStore) {
  const out: unknown[] = [];
  for (const id of RUN_IDS) {
    const events = await Promise.all(NAMES.flatMap((n) => [1, 2].map((seq) => store.events.get(id, n, seq))));
    out.push([await store.runs.get(id), await store.steps.load(id), await store.history.list(id), await store.state.get(id), events]);
  }
  out.push(await store.runs.list({ limit: 1000 }));
  return out;
}

for (const seed of [1, 2, 3, 4, 5]) {
  test(`parity with the memory store: 300 random operations, seed ${seed}`, { skip: skipReason }, async (t) => {
    const memory = createMemoryStore();
    const mongo = await freshStore();
    const r = prng(seed);
    let now = 1000;
    const tally = new Map<string, { ok: number; refused: number }>();
    for (let i = 0; i < 300; i++) {
      now += r.int(30);
      const op = await nextOp(r, now, memory);
      const expected = await outcome(op, memory);
      const actual = await outcome(op, mongo);
      assert.deepEqual(actual, expected, `op #${i} ${op.name} at ${now}`);
      const count = tally.get(op.name) ?? { ok: 0, refused: 0 };
      if ('error' in expected) count.refused++;
      else count.ok++;
      tally.set(op.name, count);
      if (i % 20 === 19) assert.deepEqual(await snapshot(mongo), await snapshot(memory), `state after op #${i}`);
    }
    assert.deepEqual(await snapshot(mongo), await snapshot(memory), 'final state');
    t.diagnostic([...tally].map(([name, c]) => `${name} ${c.ok}/${c.ok + c.refused}`).join(', '));
    // The mix must exercise success paths, not only refusals.
    for (const name of ['claim', 'runs.transition', 'steps.insert', 'steps.transition', 'state.set']) {
      assert.ok((tally.get(name)?.ok ?? 0) > 0, `no successful ${name}`);
    }
  });
}
