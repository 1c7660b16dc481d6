import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import type { WorkflowStore } from '@cairn/core/backend';
import { MODES, skip, withStore } from './support/fixture.js';
import { newRun, T0 } from './support/runs.js';

/**
 * Counts the commands a client sends, and the sequential waves they form before the operation
 * answers (round trips of latency the caller waits for).
 */
function meter(client: Redis) {
  const original = client.call.bind(client) as (...args: unknown[]) => Promise<unknown>;
  let commands = 0;
  let waves = 0;
  let inFlight = 0;
  (client as unknown as { call: (...args: unknown[]) => Promise<unknown> }).call = (...args: unknown[]) => {
    commands += 1;
    if (inFlight === 0) waves += 1;
    inFlight += 1;
    return original(...args).finally(() => (inFlight -= 1));
  };
  return {
    /** Waves until `fn` answers (the caller's latency); commands until background work drained. */
    async measure(fn: () => Promise<unknown>): Promise<{ commands: number; waves: number }> {
      commands = 0;
      waves = 0;
      await fn();
      const seen = waves;
      while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 1));
      return { commands, waves: seen };
    },
  };
}

type Op = [string, (s: WorkflowStore, id: string, fence: number) => Promise<unknown>];

const lifecycle: Op[] = [
  ['runs.claim', (s, id) => s.runs.claim(id, 'w1', 60_000, T0 + 1)],
  [
    'steps.insert (running + attempt 1)',
    (s, id, f) => s.steps.insert(id, f, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w1' }, T0 + 2),
  ],
  [
    'steps.transition (+ attempt records)',
    (s, id, f) =>
      s.steps.transition(
        id,
        f,
        { key: 'a', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 1 }, endAttempt: { status: 'succeeded', output: 1 } },
        T0 + 3,
      ),
  ],
  ['state.set', (s, id, f) => s.state.set(id, f, 'k', 1, T0 + 4)],
  ['steps.load', (s, id) => s.steps.load(id)],
  ['runs.renew', (s, id, f) => s.runs.renew(id, f, 60_000, T0 + 5)],
  ['runs.transition → waiting', (s, id, f) => s.runs.transition(id, f, { from: ['running'], to: 'waiting', wakeAt: T0 + 100 }, T0 + 6)],
  ['events.deliver (+ wake)', (s, id) => s.events.deliver(id, 'e', 1, T0 + 7)],
  ['runs.wake', (s, id) => s.runs.wake(id, T0 + 8)],
  ['runs.requestCancel', (s, id) => s.runs.requestCancel(id, T0 + 9)],
  ['runs.get', (s, id) => s.runs.get(id)],
  ['runs.findDue', (s) => s.runs.findDue(T0 + 1_000, 10)],
  ['runs.list', (s) => s.runs.list({ status: 'waiting' })],
  ['history.list', (s, id) => s.history.list(id)],
  ['runs.delete', (s, id) => s.runs.delete(id)],
];

/** Round trips of latency per operation (commands in brackets when several overlap). */
const BUDGET: Record<'combined' | 'split', Record<string, number>> = {
  combined: Object.fromEntries(lifecycle.map(([name]) => [name, name === 'runs.findDue' || name === 'runs.list' ? 2 : 1])),
  split: {
    'runs.create': 2,
    'runs.claim': 2,
    'steps.insert (running + attempt 1)': 1,
    'steps.transition (+ attempt records)': 1,
    'state.set': 1,
    'steps.load': 1,
    'runs.renew': 2,
    'runs.transition → waiting': 2,
    'events.deliver (+ wake)': 2,
    'runs.wake': 2,
    'runs.requestCancel': 2,
    'runs.get': 1,
    'runs.findDue': 2,
    'runs.list': 2,
    'history.list': 1,
    'runs.delete': 2,
  },
};

for (const mode of MODES) {
  describe(`round trips per operation (${mode.title})`, { skip }, () => {
    it('stays within the budget: one script per write, plus one index script in cluster mode', async () => {
      await withStore({ cluster: mode.cluster }, async ({ store, client }) => {
        const m = meter(client);
        const play = async (report: (name: string, cost: { commands: number; waves: number }) => void) => {
          const input = newRun();
          report('runs.create', await m.measure(() => store.runs.create(input, T0)));
          let fence = 0;
          for (const [name, op] of lifecycle) {
            report(
              name,
              await m.measure(async () => {
                const result = await op(store, input.id, fence);
                if (name === 'runs.claim') fence = (result as { fence: number }).fence;
              }),
            );
          }
        };
        await play(() => {}); // warm the script cache (the first call of each script is EVALSHA + EVAL)
        const lines: string[] = [];
        const budget = BUDGET[mode.cluster ? 'split' : 'combined'];
        await play((name, cost) => {
          lines.push(`${name}: ${cost.waves} round trip(s), ${cost.commands} command(s)`);
          assert.ok(cost.waves <= (budget[name] ?? 1), `${name} took ${cost.waves} round trips`);
        });
        console.log(`# ${mode.title}\n# ${lines.join('\n# ')}`);
      });
    });
  });
}
