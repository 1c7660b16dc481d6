import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createLocalQueue } from '@cairn/core';
import type { GroupConcurrency, Job, JobGroup } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';

// One macrotask turn: every pending microtask (and the ones they queue) runs first.
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await turn();
}

// Waits, turn by turn, until `done()` holds. Bounded by a number of turns, not by time, so a bug
// fails the test instead of hanging it.
async function until(done: () => boolean, maxTurns = 100_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (done()) return;
    await turn();
  }
  assert.fail(`condition not reached after ${maxTurns} event-loop turns`);
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

// Deterministic pseudo-random numbers, so a failing interleaving can be replayed.
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function capOf(groupConcurrency: GroupConcurrency, group: JobGroup): number {
  if (typeof groupConcurrency === 'number') return groupConcurrency;
  return (group.tier !== undefined ? groupConcurrency.tiers?.[group.tier] : undefined) ?? groupConcurrency.default;
}

describe('createLocalQueue', () => {
  it('declares its name and capabilities', async () => {
    const queue = createLocalQueue({ name: 'dev' });
    assert.equal(queue.name, 'dev');
    assert.deepEqual(queue.capabilities, { groups: true, delay: true, priority: true, dedupe: true, distributed: false });
    assert.equal(createLocalQueue().name, 'local');
    await queue.close();
  });

  it('never runs more jobs at once than a worker’s concurrency (default 1)', async () => {
    for (const concurrency of [undefined, 3]) {
      const queue = createLocalQueue();
      const random = lcg(7);
      let running = 0;
      let maxRunning = 0;
      let done = 0;
      for (let i = 0; i < 40; i++) await queue.send('jobs', i);
      await queue.work(
        'jobs',
        async () => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          await turns(1 + Math.floor(random() * 4));
          running--;
          done++;
        },
        concurrency === undefined ? {} : { concurrency },
      );
      await until(() => done === 40);
      // Equality: the cap is reached (the test has teeth) and never exceeded.
      assert.equal(maxRunning, concurrency ?? 1);
      await queue.close();
    }
  });

  it('keeps every group within its tier cap at every job start, under concurrent load', async (t) => {
    const groupConcurrency: GroupConcurrency = { default: 2, tiers: { gold: 4, free: 1 } };
    // Above the sum of the group caps (15), so the group caps are what binds most of the time;
    // ungrouped jobs (no cap) fill the rest and push the total to the worker's limit.
    const concurrency = 16;
    const groups: JobGroup[] = [
      { id: 'gold-1', tier: 'gold' },
      { id: 'gold-2', tier: 'gold' },
      { id: 'free-1', tier: 'free' },
      { id: 'free-2', tier: 'free' },
      { id: 'free-3', tier: 'free' },
      { id: 'plain-1' },
      { id: 'plain-2', tier: 'unknown-tier' },
    ];
    const queue = createLocalQueue();
    const random = lcg(42);
    const running = new Map<string, number>();
    const maxByGroup = new Map<string, number>();
    let total = 0;
    let maxTotal = 0;
    let done = 0;
    let sent = 0;
    const violations: string[] = [];

    const sendBatch = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const pick = Math.floor(random() * (groups.length + 1));
        const group = groups[pick];
        await queue.send('load', sent++, group ? { group } : {});
      }
    };
    await sendBatch(200);
    await queue.work(
      'load',
      async (job: Job) => {
        total++;
        maxTotal = Math.max(maxTotal, total);
        if (total > concurrency) violations.push(`total ${total} > ${concurrency}`);
        const group = job.group;
        if (group) {
          const now = (running.get(group.id) ?? 0) + 1;
          running.set(group.id, now);
          maxByGroup.set(group.id, Math.max(maxByGroup.get(group.id) ?? 0, now));
          const cap = capOf(groupConcurrency, group);
          if (now > cap) violations.push(`${group.id} ran ${now} > cap ${cap}`);
        }
        // Load keeps arriving while jobs run.
        if (job.payload === 100) await sendBatch(200);
        await turns(1 + Math.floor(random() * 6));
        if (group) running.set(group.id, running.get(group.id)! - 1);
        total--;
        done++;
      },
      { concurrency, groupConcurrency },
    );
    await until(() => done === 400);
    assert.deepEqual(violations, []);
    // Every cap was actually reached, so the invariant was tested at its limit.
    assert.equal(maxTotal, concurrency);
    for (const group of groups) assert.equal(maxByGroup.get(group.id), capOf(groupConcurrency, group), group.id);
    t.diagnostic(`max concurrent per group: ${JSON.stringify(Object.fromEntries(maxByGroup))}`);
    await queue.close();
  });

  it('skips a group at its cap instead of blocking the jobs behind it, even at higher priority', async () => {
    const queue = createLocalQueue();
    const started: string[] = [];
    const release = new Map<string, Deferred>();
    for (const [id, group, priority] of [
      ['a1', 'A', 0],
      ['a2', 'A', 10],
      ['b1', 'B', 0],
    ] as const) {
      release.set(id, deferred());
      await queue.send('q', id, { group: { id: group }, priority });
    }
    await queue.work(
      'q',
      async (job) => {
        started.push(job.payload as string);
        await release.get(job.payload as string)!.promise;
      },
      { concurrency: 2, groupConcurrency: 1 },
    );
    await turns(5);
    // a2 (priority 10) went first; a1 is blocked by A's cap of 1, so b1 takes the second slot.
    assert.deepEqual(started, ['a2', 'b1']);
    release.get('a2')!.resolve();
    await until(() => started.length === 3);
    assert.deepEqual(started, ['a2', 'b1', 'a1']);
    for (const d of release.values()) d.resolve();
    await queue.close();
  });

  it('delays delivery on the given clock: not before the advance, right after it', async () => {
    const clock = new ManualClock({ start: 0 });
    const queue = createLocalQueue({ clock });
    const received: string[] = [];
    await queue.send('q', 'early-delayed', { delayMs: 500 });
    await queue.work('q', async (job) => void received.push(job.payload as string), { concurrency: 4 });
    await queue.send('q', 'delayed', { delayMs: 1_000 });
    await queue.send('q', 'now');
    await turns(5);
    assert.deepEqual(received, ['now']);
    await clock.advance(499);
    assert.deepEqual(received, ['now']);
    await clock.advance(1);
    assert.deepEqual(received, ['now', 'early-delayed']);
    await clock.advance(499);
    assert.deepEqual(received, ['now', 'early-delayed']);
    await clock.advance(1);
    assert.deepEqual(received, ['now', 'early-delayed', 'delayed']);

    // close() cancels the timers of jobs still delayed, and they are never delivered.
    await queue.send('q', 'dropped', { delayMs: 100 });
    assert.equal(clock.pendingTimers, 1);
    await queue.close();
    assert.equal(clock.pendingTimers, 0);
    await clock.advance(1_000);
    assert.deepEqual(received, ['now', 'early-delayed', 'delayed']);
  });

  it('uses real timers with the system clock (checked by order, not duration)', async () => {
    const queue = createLocalQueue();
    const received: string[] = [];
    await queue.work('q', async (job) => void received.push(job.payload as string), { concurrency: 2 });
    await queue.send('q', 'delayed', { delayMs: 20 });
    await queue.send('q', 'immediate');
    await until(() => received.length === 2);
    assert.deepEqual(received, ['immediate', 'delayed']);
    await queue.close();
  });

  it('starts higher priority first, then in send order', async () => {
    const queue = createLocalQueue();
    const order: string[] = [];
    const jobs: [string, number | undefined][] = [
      ['p0-a', undefined],
      ['p5-a', 5],
      ['p0-b', 0],
      ['p10', 10],
      ['p5-b', 5],
      ['neg', -1],
      ['p0-c', undefined],
    ];
    for (const [label, priority] of jobs) await queue.send('q', label, priority === undefined ? {} : { priority });
    await queue.work('q', async (job) => void order.push(job.payload as string));
    await until(() => order.length === jobs.length);
    assert.deepEqual(order, ['p10', 'p5-a', 'p5-b', 'p0-a', 'p0-b', 'p0-c', 'neg']);
    await queue.close();
  });

  it('applies priority before taking turns between groups', async () => {
    const queue = createLocalQueue();
    const order: string[] = [];
    for (let i = 0; i < 3; i++) await queue.send('q', `a-low-${i}`, { group: { id: 'a' } });
    for (let i = 0; i < 3; i++) await queue.send('q', `b-high-${i}`, { group: { id: 'b' }, priority: 1 });
    for (let i = 0; i < 3; i++) await queue.send('q', `c-low-${i}`, { group: { id: 'c' } });
    await queue.work('q', async (job) => void order.push(job.payload as string));
    await until(() => order.length === 9);
    assert.deepEqual(order, ['b-high-0', 'b-high-1', 'b-high-2', 'a-low-0', 'c-low-0', 'a-low-1', 'c-low-1', 'a-low-2', 'c-low-2']);
    await queue.close();
  });

  it('ignores a send whose dedupeKey is still queued, and accepts it again once that job started', async () => {
    const clock = new ManualClock({ start: 0 });
    const queue = createLocalQueue({ clock });
    const received: unknown[] = [];
    const gate = deferred();
    await queue.send('q', 'first', { dedupeKey: 'k' });
    await queue.send('q', 'duplicate', { dedupeKey: 'k' });
    // The key is per queue name.
    await queue.send('other', 'other-queue', { dedupeKey: 'k' });
    // A delayed job holds its key while it waits.
    await queue.send('q', 'delayed', { dedupeKey: 'd', delayMs: 100 });
    await queue.send('q', 'delayed-duplicate', { dedupeKey: 'd' });
    await queue.work('q', async (job) => {
      received.push(job.payload);
      await gate.promise;
    });
    await queue.work('other', async (job) => void received.push(job.payload));
    await turns(3);
    assert.deepEqual(received, ['first', 'other-queue']);
    // 'first' has started: the same key now enqueues a new job.
    await queue.send('q', 'after-start', { dedupeKey: 'k' });
    await queue.send('q', 'after-start-duplicate', { dedupeKey: 'k' });
    gate.resolve();
    await clock.advance(100);
    await until(() => received.length === 4);
    await turns(5);
    assert.deepEqual(received, ['first', 'other-queue', 'after-start', 'delayed']);
    await queue.close();
  });

  it('delivers payloads after a JSON round trip and refuses non-JSON ones without enqueuing', async () => {
    const queue = createLocalQueue();
    const received: unknown[] = [];
    const nested = { list: [1, undefined] as (number | undefined)[], gone: undefined };
    // The payload rule: undefined properties are left out, undefined items become null.
    await queue.send('q', { nested } as never);
    // Mutating after send changes nothing: the job holds its own copy.
    nested.list.push(3);
    for (const bad of [() => 1, { n: 1n }, undefined, { at: new Date(0) }, { x: Number.NaN }, Symbol('s')]) {
      await assert.rejects(queue.send('q', bad as never, { dedupeKey: 'must-not-stick' }), (err) => CairnError.is(err, 'NOT_SERIALIZABLE'));
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await assert.rejects(queue.send('q', cyclic as never), (err) => CairnError.is(err, 'NOT_SERIALIZABLE'));
    // A refused send left no dedupe key behind.
    await queue.send('q', 'sentinel', { dedupeKey: 'must-not-stick' });
    await queue.work('q', async (job) => void received.push(job.payload));
    await until(() => received.length === 2);
    await turns(5);
    assert.deepStrictEqual(received, [{ nested: { list: [1, null] } }, 'sentinel']);
    await queue.close();
  });

  it('does not redeliver a job whose handler throws, reports it to onError and keeps working', async () => {
    const errors: [string, unknown][] = [];
    const queue = createLocalQueue({
      onError: (error, job) => {
        errors.push([job.payload as string, (error as Error).message]);
        if (job.payload === 'async-fail') throw new Error('a broken hook is ignored too');
      },
    });
    const calls = new Map<string, number>();
    await queue.work(
      'q',
      async (job) => {
        const label = job.payload as string;
        calls.set(label, (calls.get(label) ?? 0) + 1);
        if (label === 'sync-fail') throw new Error('sync boom');
        await turn();
        if (label === 'async-fail') throw new Error('async boom');
      },
      { concurrency: 2 },
    );
    // A handler that is not even async and throws at once.
    await queue.work('plain', ((job: Job) => {
      calls.set(`plain:${String(job.payload)}`, 1);
      throw new Error('not a promise');
    }) as never);
    await queue.send('q', 'sync-fail');
    await queue.send('q', 'async-fail');
    await queue.send('plain', 'x');
    await until(() => errors.length === 3);
    await queue.send('q', 'ok');
    await until(() => calls.has('ok'));
    await turns(20);
    assert.deepEqual(Object.fromEntries(calls), { 'sync-fail': 1, 'async-fail': 1, 'plain:x': 1, ok: 1 });
    assert.deepEqual(errors.sort(), [
      ['async-fail', 'async boom'],
      ['sync-fail', 'sync boom'],
      ['x', 'not a promise'],
    ]);
    await queue.close();
  });

  it('does not let a group with 100x the jobs starve a small one (round robin across groups)', async (t) => {
    const queue = createLocalQueue();
    const random = lcg(3);
    const starts: string[] = [];
    let done = 0;
    const BIG = 1_000;
    const SMALL = 10;
    const concurrency = 4;
    // The big group is sent first, so plain FIFO would make every small job wait for all 1 000.
    for (let i = 0; i < BIG; i++) await queue.send('q', `big-${i}`, { group: { id: 'big' } });
    for (let i = 0; i < SMALL; i++) await queue.send('q', `small-${i}`, { group: { id: 'small' } });
    await queue.work(
      'q',
      async (job) => {
        starts.push(job.payload as string);
        await turns(1 + Math.floor(random() * 3));
        done++;
      },
      { concurrency, groupConcurrency: 3 },
    );
    await until(() => done === BIG + SMALL);
    // A small job's wait, counted as the jobs that started before it.
    const positions = starts.flatMap((label, index) => (label.startsWith('small-') ? [index] : []));
    const worst = Math.max(...positions);
    t.diagnostic(`worst small-group wait: ${worst} jobs started before it (of ${BIG + SMALL}); FIFO would give ${BIG + SMALL - 1}`);
    assert.equal(positions.length, SMALL);
    // Round robin interleaves the two groups: the k-th small job starts within about 2k starts.
    assert.ok(worst <= 2 * SMALL + concurrency, `worst wait ${worst}`);
    // Each group's own jobs still start in send order.
    assert.deepEqual(
      starts.filter((l) => l.startsWith('small-')),
      Array.from({ length: SMALL }, (_, i) => `small-${i}`),
    );
    await queue.close();
  });

  it('serves a small group that arrives while a large backlog drains', async (t) => {
    const queue = createLocalQueue();
    const random = lcg(11);
    const starts: string[] = [];
    const sentAt = new Map<string, number>();
    let done = 0;
    const BIG = 1_000;
    const SMALL = 10;
    const groups = ['big', 'mid'];
    for (let i = 0; i < BIG; i++) await queue.send('q', `${groups[i % 2]}-${i}`, { group: { id: groups[i % 2]! } });
    await queue.work(
      'q',
      async (job) => {
        const label = job.payload as string;
        starts.push(label);
        if (starts.length === 200) {
          // The small group shows up while 800 jobs of the others are still waiting.
          for (let i = 0; i < SMALL; i++) {
            sentAt.set(`small-${i}`, starts.length);
            await queue.send('q', `small-${i}`, { group: { id: 'small' } });
          }
        }
        await turns(1 + Math.floor(random() * 3));
        done++;
      },
      // Caps alone would not protect the small group: two groups could fill all six slots.
      { concurrency: 6, groupConcurrency: 4 },
    );
    await until(() => done === BIG + SMALL);
    const waits = [...sentAt].map(([label, at]) => starts.indexOf(label) - at);
    const worst = Math.max(...waits);
    t.diagnostic(`small group arriving mid-backlog: worst wait ${worst} job starts (waits ${waits.join(',')})`);
    // Three groups take turns: the k-th small job waits about 3k starts, never for the backlog.
    assert.ok(worst <= 3 * SMALL + 6, `worst wait ${worst}`);
    const lastSmall = Math.max(...[...sentAt.keys()].map((label) => starts.indexOf(label)));
    assert.ok(lastSmall < 300, `last small job started at ${lastSmall} of ${BIG + SMALL}`);
    await queue.close();
  });

  it('shares one queue name between several workers and picks up jobs sent before work()', async () => {
    const queue = createLocalQueue();
    const byWorker = new Map<string, number>();
    const seen = new Map<number, number>();
    let running = 0;
    let maxRunning = 0;
    for (let i = 0; i < 60; i++) await queue.send('shared', i);
    const handler = (name: string) => async (job: Job) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      byWorker.set(name, (byWorker.get(name) ?? 0) + 1);
      seen.set(job.payload as number, (seen.get(job.payload as number) ?? 0) + 1);
      await turns(2);
      running--;
    };
    await queue.work('shared', handler('w1'), { concurrency: 2 });
    await queue.work('shared', handler('w2'), { concurrency: 2 });
    await until(() => seen.size === 60);
    await turns(5);
    assert.ok(
      [...seen.values()].every((n) => n === 1),
      'every job ran exactly once',
    );
    assert.ok((byWorker.get('w1') ?? 0) > 0 && (byWorker.get('w2') ?? 0) > 0, JSON.stringify([...byWorker]));
    assert.equal(maxRunning, 4);
    await queue.close();
  });

  it('close() waits for running jobs, discards waiting ones and refuses further use', async () => {
    const queue = createLocalQueue();
    const gates = [deferred(), deferred()];
    const started: number[] = [];
    const finished: number[] = [];
    for (let i = 0; i < 3; i++) await queue.send('q', i);
    await queue.work(
      'q',
      async (job) => {
        const i = job.payload as number;
        started.push(i);
        await gates[i]!.promise;
        finished.push(i);
      },
      { concurrency: 2 },
    );
    await until(() => started.length === 2);
    let closed = false;
    const closing = queue.close().then(() => (closed = true));
    assert.equal(queue.close(), queue.close(), 'close() is idempotent');
    await turns(10);
    assert.equal(closed, false, 'close() resolved while jobs were running');
    gates[0]!.resolve();
    await turns(10);
    assert.equal(closed, false, 'close() resolved while a job was still running');
    gates[1]!.resolve();
    await closing;
    assert.deepEqual(finished.sort(), [0, 1]);
    assert.deepEqual(started, [0, 1], 'the waiting job was not started after close()');
    await assert.rejects(queue.send('q', 3), (err) => CairnError.is(err, 'ENGINE_STOPPED'));
    await assert.rejects(
      queue.work('q', async () => undefined),
      (err) => CairnError.is(err, 'ENGINE_STOPPED'),
    );
  });

  it('worker.stop() waits for its own jobs and leaves the rest to other workers', async () => {
    const queue = createLocalQueue();
    const gate = deferred();
    const ran: string[] = [];
    for (let i = 0; i < 4; i++) await queue.send('q', i);
    const first = await queue.work('q', async (job) => {
      ran.push(`first:${String(job.payload)}`);
      await gate.promise;
    });
    await until(() => ran.length === 1);
    let stopped = false;
    const stopping = first.stop().then(() => (stopped = true));
    await turns(5);
    assert.equal(stopped, false);
    gate.resolve();
    await stopping;
    await queue.work('q', async (job) => void ran.push(`second:${String(job.payload)}`));
    await until(() => ran.length === 4);
    assert.deepEqual(ran, ['first:0', 'second:1', 'second:2', 'second:3']);
    await queue.close();
  });

  it('refuses bad options with typed errors', async () => {
    const queue = createLocalQueue();
    const handler = async () => undefined;
    await assert.rejects(queue.work('q', handler, { concurrency: 0 }), (err) => CairnError.is(err, 'INVALID_INPUT'));
    await assert.rejects(queue.work('q', handler, { concurrency: 1.5 }), (err) => CairnError.is(err, 'INVALID_INPUT'));
    await assert.rejects(queue.work('q', handler, { groupConcurrency: { default: 1, tiers: { x: 0 } } }), (err) => CairnError.is(err, 'INVALID_INPUT'));
    await assert.rejects(queue.work('', handler), (err) => CairnError.is(err, 'INVALID_INPUT'));
    await assert.rejects(queue.send('q', 1, { delayMs: -1 }), (err) => CairnError.is(err, 'INVALID_INPUT'));
    await assert.rejects(queue.send('q', 1, { priority: Number.NaN }), (err) => CairnError.is(err, 'INVALID_INPUT'));
    await assert.rejects(queue.send('q', 1, { group: { id: '' } }), (err) => CairnError.is(err, 'INVALID_INPUT'));
    await queue.close();
  });
});
