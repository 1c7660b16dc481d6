// Mermaid output, snapshot-tested: the exact text for each node kind, edge kind and state colour.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type GraphSpec, ref, toMermaid } from '@cairn/graph';
import { formatCondition } from '../src/to-mermaid.js';

const EVERY_KIND: GraphSpec = {
  start: ['fetch', 'wait'],
  nodes: {
    fetch: {
      action: 'load',
      next: {
        branch: [{ when: { and: [{ gt: [ref('fetch.n'), 3] }, { not: { in: [ref('input.tier'), ['free', 'trial']] } }] }, to: 'gate' }],
        otherwise: 'sub',
      },
      onError: 'fix',
    },
    wait: { event: 'paid', timeout: '1h', next: 'end' },
    gate: { approval: { approvers: ['ada'], expiry: '1d' }, next: 'end', onReject: 'fix', onExpiry: 'fix', label: 'manager says "yes" & <signs>' },
    sub: { workflow: 'child-flow', next: 'each' },
    each: { forEach: { items: ref('fetch.items'), action: 'load', concurrency: 2 }, next: 'end' },
    fix: { sleep: '5m' },
    end: { action: 'load' },
  },
};

describe('toMermaid', () => {
  it('draws every node kind, branch, parallel start, outcome and error edge (snapshot)', () => {
    assert.equal(
      toMermaid(EVERY_KIND),
      `flowchart TD
  start((start))
  n1["fetch<br/>action: load"]
  n2>"wait<br/>event: paid"]
  n3{{"gate<br/>manager says #quot;yes#quot; #amp; #lt;signs#gt;"}}
  n4[["sub<br/>workflow: child-flow"]]
  n5[/"each<br/>for each fetch.items: load"/]
  n6("fix<br/>sleep 5m")
  n7["end<br/>action: load"]
  finish((end))
  start --> n1
  start --> n2
  n1 -->|"fetch.n #gt; 3 and not (input.tier in [#quot;free#quot;,#quot;trial#quot;])"| n3
  n1 -->|"otherwise"| n4
  n1 -.->|"error"| n6
  n2 --> n7
  n3 --> n7
  n3 -->|"rejected"| n6
  n3 -->|"expired"| n6
  n4 --> n5
  n5 --> n7
  n6 --> finish
  n7 --> finish
`,
    );
  });

  it('colours nodes by their state in a run, left to right on request (snapshot)', () => {
    const graph: GraphSpec = { start: 'a', nodes: { a: { action: 'x', next: 'b' }, b: { approval: {}, next: 'c' }, c: { action: 'x' } } };
    assert.equal(
      toMermaid(graph, { direction: 'LR', states: { a: 'succeeded', b: 'waiting-approval', c: 'not-run' } }),
      `flowchart LR
  start((start))
  n1["a<br/>action: x"]
  n2{{"b<br/>approval"}}
  n3["c<br/>action: x"]
  finish((end))
  start --> n1
  n1 --> n2
  n2 --> n3
  n3 --> finish
  class n1 succeeded
  class n2 waiting_approval
  class n3 not_run
  classDef not_run fill:#f4f4f5,stroke:#a1a1aa,color:#52525b
  classDef waiting_approval fill:#ffedd5,stroke:#ea580c,stroke-width:2px
  classDef succeeded fill:#dcfce7,stroke:#16a34a
`,
    );
  });

  it('formats every condition operator', () => {
    assert.equal(
      formatCondition({ or: [{ eq: [ref('a'), 1] }, { ne: [ref('b'), 'x'] }, { gte: [1, 2] }, { lt: [1, 2] }, { lte: [1, 2] }, { exists: ref('c.d') }] }),
      'a == 1 or b != "x" or 1 >= 2 or 1 < 2 or 1 <= 2 or exists(c.d)',
    );
  });

  it('a node named like a Mermaid keyword cannot break the drawing', () => {
    const text = toMermaid({ start: 'end', nodes: { end: { action: 'x', next: 'graph' }, graph: { action: 'x' } } });
    assert.ok(!/^\s+end\b/m.test(text) && text.includes('n1["end<br/>action: x"]'));
  });
});
