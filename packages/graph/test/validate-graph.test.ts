// Validation against hostile input: every bad graph is refused with the node and the problem, and
// nothing is registered; huge and deeply nested input is refused quickly, without a stack overflow.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore, createEngine } from '@cairn/core';
import { checkGraph, defineGraph, GraphError, type GraphIssue, MAX_GRAPH_NODES, ref, validateGraph } from '@cairn/graph';

const actions = new Set(['act']);
const problems = (spec: unknown) => validateGraph(spec, { actions }).map((i: GraphIssue) => `${i.node ?? '-'}:${i.problem}`);

describe('validateGraph', () => {
  it('a valid graph has no problem', () => {
    assert.deepEqual(
      problems({
        start: 'a',
        nodes: {
          a: { action: 'act', next: ['b', 'c'] },
          b: { action: 'act', next: 'd' },
          c: { sleep: '1s', next: 'd' },
          d: { action: 'act', input: { x: ref('b.v') } },
        },
      }),
      [],
    );
  });

  const cases: [string, unknown, string[]][] = [
    ['not an object', 42, ['-:bad-node']],
    ['no nodes', { start: 'a', nodes: {} }, ['-:bad-node']],
    ['an unknown key', { start: 'a', nodes: { a: { action: 'act' } }, extra: 1 }, ['-:bad-node']],
    ['a start that is not a node', { start: 'zz', nodes: { a: { action: 'act' } } }, ['-:unknown-node']],
    ['an edge to nothing', { start: 'a', nodes: { a: { action: 'act', next: 'ghost' } } }, ['a:unknown-node']],
    ['an error edge to nothing', { start: 'a', nodes: { a: { action: 'act', onError: 'ghost' } } }, ['a:unknown-node']],
    ['an unknown action', { start: 'a', nodes: { a: { action: 'nope' } } }, ['a:unknown-action']],
    ['an unknown compensation', { start: 'a', nodes: { a: { action: 'act', compensate: 'nope' } } }, ['a:unknown-action']],
    ['an unreachable node', { start: 'a', nodes: { a: { action: 'act' }, island: { action: 'act' } } }, ['island:unreachable']],
    [
      'a cycle',
      { start: 'a', nodes: { a: { action: 'act', next: 'b' }, b: { action: 'act', next: 'c' }, c: { action: 'act', next: 'b' } } },
      ['b:cycle', 'c:cycle'],
    ],
    ['a self-loop', { start: 'a', nodes: { a: { action: 'act', next: 'b' }, b: { action: 'act', onError: 'b' } } }, ['b:cycle']],
    ['a start with an incoming edge', { start: 'a', nodes: { a: { action: 'act', next: 'b' }, b: { action: 'act', next: 'a' } } }, ['a:bad-node']],
    ['a ref to a later node', { start: 'a', nodes: { a: { action: 'act', input: ref('b.v'), next: 'b' }, b: { action: 'act' } } }, ['a:ref-not-before']],
    [
      'a ref to a parallel sibling',
      { start: 'a', nodes: { a: { action: 'act', next: ['b', 'c'] }, b: { action: 'act', input: ref('c.v') }, c: { action: 'act' } } },
      ['b:ref-not-before'],
    ],
    ['a ref to nothing', { start: 'a', nodes: { a: { action: 'act', input: ref('ghost.v') } } }, ['a:bad-ref']],
    ['item outside forEach', { start: 'a', nodes: { a: { action: 'act', input: ref('item') } } }, ['a:bad-ref']],
    ['a malformed ref', { start: 'a', nodes: { a: { action: 'act', input: ref('input..x') } } }, ['a:bad-ref']],
    ['a $ref with company', { start: 'a', nodes: { a: { action: 'act', input: { $ref: 'input', other: 1 } } } }, ['a:bad-ref']],
    [
      'an unknown operator',
      { start: 'a', nodes: { a: { action: 'act', next: { branch: [{ when: { like: [1, 2] }, to: 'b' }] } }, b: { action: 'act' } } },
      ['a:bad-condition'],
    ],
    [
      'a comparison with one operand',
      { start: 'a', nodes: { a: { action: 'act', next: { branch: [{ when: { gt: [1] }, to: 'b' }] } }, b: { action: 'act' } } },
      ['a:bad-condition'],
    ],
    [
      'an object operand',
      { start: 'a', nodes: { a: { action: 'act', next: { branch: [{ when: { eq: [{ a: 1 }, 1] }, to: 'b' }] } }, b: { action: 'act' } } },
      ['a:bad-condition'],
    ],
    [
      'code as a condition',
      { start: 'a', nodes: { a: { action: 'act', next: { branch: [{ when: 'input.x > 1', to: 'b' }] } }, b: { action: 'act' } } },
      ['a:bad-condition'],
    ],
    ['two kinds', { start: 'a', nodes: { a: { action: 'act', sleep: '1s' } } }, ['a:bad-node']],
    ['no kind', { start: 'a', nodes: { a: { next: 'a' } } }, ['a:bad-node']],
    ['a bad id', { start: 'a', nodes: { a: { action: 'act' }, 'bad id': { action: 'act' } } }, ['bad id:bad-id']],
    ['a reserved id', { start: 'a', nodes: { a: { action: 'act', next: 'input' }, input: { action: 'act' } } }, ['input:bad-id']],
    ['a bad duration', { start: 'a', nodes: { a: { sleep: 'forever' } } }, ['a:bad-duration']],
    ['retries out of range', { start: 'a', nodes: { a: { action: 'act', retries: -1 } } }, ['a:bad-node']],
    ['onExpiry without expiry', { start: 'a', nodes: { a: { approval: {}, onExpiry: 'b' }, b: { action: 'act' } } }, ['a:bad-node']],
    ['a bad approval schema', { start: 'a', nodes: { a: { approval: { schema: { type: 'date' } } } } }, ['a:bad-schema']],
    ['approvers not a list', { start: 'a', nodes: { a: { approval: { approvers: 'ada' } } } }, ['a:bad-node']],
    ['forEach over a literal', { start: 'a', nodes: { a: { forEach: { items: [1, 2], action: 'act' } } } }, ['a:bad-ref']],
    [
      'forEach with both action and workflow',
      { start: 'a', nodes: { a: { forEach: { items: ref('input.l'), action: 'act', workflow: 'w' } } } },
      ['a:bad-node'],
    ],
    ['a function in the graph', { start: 'a', nodes: { a: { action: 'act', input: () => 1 } } }, ['-:not-json']],
    ['NaN in the graph', { start: 'a', nodes: { a: { action: 'act', input: Number.NaN } } }, ['-:not-json']],
    ['a class instance', { start: 'a', nodes: { a: { action: 'act', input: new Date(0) } } }, ['-:not-json']],
  ];
  for (const [what, spec, expected] of cases) {
    it(`refuses ${what}, naming the node`, () => {
      assert.deepEqual(problems(spec), expected);
      assert.throws(
        () => checkGraph(spec, { actions }),
        (e) => GraphError.is(e, 'GRAPH_INVALID') && (e as GraphError).issues.length === expected.length,
      );
    });
  }

  it('refuses a self-referencing object without looping', () => {
    const input: Record<string, unknown> = {};
    input.self = input;
    assert.deepEqual(problems({ start: 'a', nodes: { a: { action: 'act', input } } }), ['-:not-json']);
  });

  it('refuses conditions nested 100,000 deep without a stack overflow', () => {
    let when: unknown = { eq: [1, 1] };
    for (let i = 0; i < 100_000; i += 1) when = { not: when };
    assert.deepEqual(problems({ start: 'a', nodes: { a: { action: 'act', next: { branch: [{ when, to: 'b' }] } }, b: { action: 'act' } } }), ['-:too-deep']);
  });

  it('refuses conditions nested just over the limit with too-deep naming the node', () => {
    let when: unknown = { eq: [1, 1] };
    for (let i = 0; i < 34; i += 1) when = { not: when };
    assert.deepEqual(problems({ start: 'a', nodes: { a: { action: 'act', next: { branch: [{ when, to: 'b' }] } }, b: { action: 'act' } } }), ['a:too-deep']);
  });

  it('refuses a graph over the node limit at once, and takes a 1,000-node chain', () => {
    const chain = (n: number) => ({
      start: 'n0',
      nodes: Object.fromEntries(
        Array.from({ length: n }, (_, i) => [
          `n${i}`,
          i + 1 < n ? { action: 'act', next: `n${i + 1}`, input: ref(`n${Math.max(0, i - 1)}.v`) } : { action: 'act' },
        ]),
      ),
    });
    assert.deepEqual(problems(chain(MAX_GRAPH_NODES + 1)), ['-:too-large']);
    const started = performance.now();
    assert.deepEqual(problems({ ...chain(MAX_GRAPH_NODES), nodes: { ...chain(MAX_GRAPH_NODES).nodes, n0: { action: 'act', next: 'n1' } } }), []);
    assert.ok(performance.now() - started < 10_000);
  });

  it('reads no prototype: __proto__ as a node id or a key is data, refused or kept as data', () => {
    const spec = JSON.parse('{"start":"a","nodes":{"a":{"action":"act","next":"__proto__"},"__proto__":{"action":"act"}}}');
    assert.deepEqual(problems(spec), ['__proto__:bad-id']);
  });

  it('defineGraph refuses an invalid graph and registers nothing; a later edit of the object changes nothing', async () => {
    assert.throws(
      () => defineGraph('bad', { start: 'a', nodes: { a: { action: 'missing' } } }),
      (e) => GraphError.is(e, 'GRAPH_INVALID') && (e as GraphError).node === 'a',
    );
    const spec = { start: 'a', nodes: { a: { action: 'act', input: 1 } } };
    const wf = defineGraph('frozen', spec, { actions: { act: (x) => x } });
    (spec.nodes.a as { input: number }).input = 2;
    assert.equal((wf.graph.nodes.a as { input: number }).input, 1);
    assert.throws(() => {
      (wf.graph.nodes.a as { input: number }).input = 3;
    });
    const engine = createEngine({ store: createMemoryStore(), workflows: [wf] });
    await engine.start({ workers: false });
    await engine.stop();
  });
});
