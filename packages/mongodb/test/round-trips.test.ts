import assert from 'node:assert/strict';
import type { MongoStore } from '../src/index.js';
import { claimedRun, createRun, taskStep } from './support/fixtures.js';
import { running, storeTest } from './support/server.js';

/** The commands `fn` sent to the server (command monitoring), session housekeeping left out. */
async function commandsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const { commands } = running();
  commands.length = 0;
  await fn();
  return commands.filter((c) => c !== 'endSessions');
}

storeTest('round trips: every hot-path operation is one command', async (store: MongoStore) => {
  const run = await claimedRun(store, 100);
  const waitingRun = await createRun(store, 100);
  const budget: Array<[string, () => Promise<unknown>, string[]]> = [
    ['runs.create', () => createRun(store, 100), ['insert']],
    ['runs.get', () => store.runs.get(run.id), ['find']],
    ['runs.claim', () => store.runs.claim(waitingRun.id, 'o', 1000, 200), ['findAndModify']],
    ['runs.renew', () => store.runs.renew(run.id, run.fence, 1000, 200), ['findAndModify']],
    ['steps.insert (running, attempt 1)', () => store.steps.insert(run.id, run.fence, taskStep('a', 0), 200), ['update']],
    [
      'steps.transition (finish + close attempt)',
      () =>
        store.steps.transition(
          run.id,
          run.fence,
          { key: 'a', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 1 }, endAttempt: { status: 'succeeded', output: 1 } },
          201,
        ),
      ['findAndModify'],
    ],
    ['state.set', () => store.state.set(run.id, run.fence, 'k', 1, 202), ['update']],
    ['steps.load (replay)', () => store.steps.load(run.id), ['find']],
    ['history.list', () => store.history.list(run.id), ['find']],
    ['state.get', () => store.state.get(run.id), ['find']],
    [
      'runs.transition running → waiting',
      () => store.runs.transition(run.id, run.fence, { from: ['running'], to: 'waiting', wakeAt: 900 }, 203),
      ['findAndModify'],
    ],
    // A message takes the next number of its name: the count is read, then compare-and-set.
    ['events.deliver (waiting run, wakes it)', () => store.events.deliver(run.id, 'e', 1, 204), ['find', 'update']],
    ['runs.wake (waiting run)', () => store.runs.wake(run.id, 205), ['update']],
    ['events.get', () => store.events.get(run.id, 'e', 1), ['find']],
    ['runs.findDue', () => store.runs.findDue(1000, 10), ['find']],
    ['runs.list', () => store.runs.list({ status: 'waiting' }), ['find']],
    [
      'runs.transition → completed',
      async () => {
        const again = await store.runs.claim(run.id, 'o2', 1000, 300);
        running().commands.length = 0;
        await store.runs.transition(run.id, again!.fence, { from: ['running'], to: 'completed', output: null }, 301);
      },
      ['findAndModify'],
    ],
    // One command that also says whether the run had stream entries (it had none).
    ['runs.delete', () => store.runs.delete(run.id), ['findAndModify']],
    ['versions.upsert', () => store.versions.upsert('wf', 'v1', {}, 1), ['findAndModify']],
  ];
  for (const [name, fn, expected] of budget) assert.deepEqual(await commandsOf(fn), expected, name);
});

storeTest('round trips: the slower paths are bounded (wake of a running run, a wake since the claim)', async (store) => {
  const run = await claimedRun(store, 100);
  // wake/deliver try the pending/waiting update first, then the running one.
  assert.deepEqual(await commandsOf(() => store.runs.wake(run.id, 150)), ['update', 'update']);
  // deliver first reads the count of the name (the compare-and-set needs it).
  assert.deepEqual(await commandsOf(() => store.events.deliver(run.id, 'e', 1, 151)), ['find', 'update', 'update']);
  // The wait assumed no wake since the claim; one read finds it, one retry writes the merge.
  assert.deepEqual(await commandsOf(() => store.runs.transition(run.id, run.fence, { from: ['running'], to: 'waiting', wakeAt: 900 }, 160)), [
    'findAndModify',
    'find',
    'findAndModify',
  ]);
  // A refusal costs one extra read that names the reason.
  assert.deepEqual(await commandsOf(() => store.state.set(run.id, run.fence + 1, 'k', 1, 170).catch(() => undefined)), ['update', 'find']);
});

storeTest('round trips: a run with stream entries is marked at its first entry, and its delete removes them in one more command', async (store) => {
  const run = await claimedRun(store, 100);
  const streams = store.streams;
  assert.ok(streams);
  // The first entry marks the run (one update), the next ones do not.
  assert.deepEqual(await commandsOf(() => streams.append(run.id, run.fence, { stream: 's', index: 0, data: 1 }, 110)), ['find', 'update', 'find', 'insert']);
  assert.deepEqual(await commandsOf(() => streams.append(run.id, run.fence, { stream: 's', index: 1, data: 2 }, 111)), ['find', 'find', 'insert']);
  assert.deepEqual(await commandsOf(() => store.runs.delete(run.id)), ['findAndModify', 'delete']);
  assert.deepEqual(await streams.list(run.id), []);
});
