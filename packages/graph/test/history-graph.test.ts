// A code run drawn from its history: a real run on the memory engine, its recorded calls in call
// order with their kinds and states, snapshot-tested as Mermaid; a long history is cut with a count.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineWorkflow, type StepRecord } from '@cairn/core';
import { historyGraph, MAX_HISTORY_NODES, toMermaid } from '@cairn/graph';
import { graphWorld } from './helpers/graph-world.js';

const ship = defineWorkflow('history-ship', async (ctx) => ctx.step('label', () => 'L-1'));
const order = defineWorkflow('history-order', async (ctx, input: { id: string }) => {
  const [stock, price] = await Promise.all([ctx.step('reserve', () => `r-${input.id}`), ctx.step('price', () => 42)]);
  await ctx.sleep('cool off', 1_000);
  const label = await ctx.child(ship, null);
  const paid = await ctx.waitForEvent('paid');
  return { stock, price, label, paid };
});

describe('historyGraph', () => {
  it("draws a code run's recorded calls in call order, shaped by kind and coloured by state (snapshot)", async () => {
    const world = await graphWorld([order, ship]);
    try {
      const { id } = await world.engine.startRun(order, { id: 'o-1' });
      await world.until(id, (run) => run.status === 'waiting' && run.wakeAt === undefined);
      const drawing = historyGraph(await world.engine.steps(id));
      assert.equal(
        toMermaid(drawing.graph, { states: drawing.states }),
        `flowchart TD
  start((start))
  n1["reserve<br/>step: reserve"]
  n2["price<br/>step: price"]
  n3("cool off<br/>sleep: cool off")
  n4[["child:history-ship<br/>child: history-ship"]]
  n5>"event:paid<br/>event: paid"]
  finish((end))
  start --> n1
  n1 --> n2
  n2 --> n3
  n3 --> n4
  n4 --> n5
  n5 --> finish
  class n1 succeeded
  class n2 succeeded
  class n3 succeeded
  class n4 succeeded
  class n5 waiting
  classDef waiting fill:#fef9c3,stroke:#ca8a04
  classDef succeeded fill:#dcfce7,stroke:#16a34a
`,
      );
    } finally {
      await world.stop();
    }
  });

  it('cuts a history longer than MAX_HISTORY_NODES with one node that counts the rest, and draws an empty one', () => {
    const steps: StepRecord[] = Array.from({ length: MAX_HISTORY_NODES + 7 }, (_, i) => ({
      runId: 'r',
      key: `s${i}`,
      name: `s${i}`,
      kind: 'task',
      seq: MAX_HISTORY_NODES + 7 - i, // given out of order: drawn by seq
      status: 'succeeded',
      attempt: 1,
      maxAttempts: 1,
      queued: false,
      createdAt: 0,
      updatedAt: 0,
    }));
    const { graph, states } = historyGraph(steps);
    assert.equal(Object.keys(graph.nodes).length, MAX_HISTORY_NODES + 1);
    assert.equal(graph.start, `s${MAX_HISTORY_NODES + 6}`, 'the lowest seq first');
    assert.equal(states['… 7 more calls'], 'not-run');
    assert.deepEqual(Object.keys(historyGraph([]).graph.nodes), ['not started']);
  });
});
