// The layout the dashboard draws: layers by longest path, rows centred, edges that skip a layer go
// round it; exact numbers for a small graph.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { layoutGraph } from '@cairn/graph';

it('lays a branch and a join out in layers, with the skipping edge routed round', () => {
  const layout = layoutGraph({
    start: 'a',
    nodes: { a: { action: 'x', next: { branch: [{ when: { eq: [1, 1] }, to: 'b' }], otherwise: 'c' } }, b: { approval: {}, next: 'c' }, c: { sleep: '1s' } },
  });
  assert.deepEqual(
    layout.nodes.map((n) => [n.id, n.kind, n.detail, n.x, n.y]),
    [
      ['a', 'action', 'action: x', 20, 20],
      ['b', 'approval', 'approval', 20, 124],
      ['c', 'sleep', 'sleep 1s', 20, 228],
    ],
  );
  assert.deepEqual([layout.width, layout.height], [260, 296]);
  assert.deepEqual(
    layout.edges.map((e) => [e.from, e.to, e.kind, e.label ?? null, e.points]),
    [
      [
        'a',
        'b',
        'branch',
        '1 == 1',
        [
          [110, 68],
          [110, 124],
        ],
      ],
      [
        'a',
        'c',
        'otherwise',
        'otherwise',
        [
          [110, 68],
          [216, 96],
          [216, 200],
          [110, 228],
        ],
      ],
      [
        'b',
        'c',
        'next',
        null,
        [
          [110, 172],
          [110, 228],
        ],
      ],
    ],
  );
});
