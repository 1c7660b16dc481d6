// The coverage summary: lcov records of several runs over one file add up, and each area counts
// only its own folder's files.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeLcov, percent, totals } from '../lcov.js';
import { runFolder, summaryTable } from '../summary.js';

const run1 = `TN:
SF:/repo/packages/core/src/engine/a.ts
FN:1,f
FN:5,g
FNDA:3,f
FNDA:0,g
FNF:2
FNH:1
BRDA:2,0,0,1
BRDA:2,0,1,0
BRF:2
BRH:1
DA:1,3
DA:2,3
DA:5,0
LF:3
LH:2
end_of_record
SF:/repo/packages/kysely/src/b.ts
DA:1,0
end_of_record
`;

const run2 = `SF:/repo/packages/core/src/engine/a.ts
FN:5,g
FNDA:1,g
BRDA:2,0,1,2
DA:5,1
end_of_record
SF:/repo/packages/core/src/memory/c.ts
DA:1,1
DA:2,0
end_of_record
`;

describe('scripts/coverage', () => {
  it('adds up the hits of several runs on one file', () => {
    const files = mergeLcov(run2, mergeLcov(run1));
    const a = files.get('/repo/packages/core/src/engine/a.ts');
    assert.ok(a);
    assert.deepEqual(
      [...a.lines],
      [
        [1, 3],
        [2, 3],
        [5, 1],
      ],
    );
    assert.deepEqual(
      [...a.branches],
      [
        ['2,0,0', 1],
        ['2,0,1', 2],
      ],
    );
    assert.deepEqual(
      [...a.functions],
      [
        ['1,f', 3],
        ['5,g', 1],
      ],
    );
  });

  it('counts covered and total per area; one run alone leaves what only the other covered uncovered', () => {
    const alone = totals(mergeLcov(run1), (p) => p.startsWith('/repo/packages/core/src/'));
    assert.deepEqual(alone, { files: 1, lines: { covered: 2, total: 3 }, branches: { covered: 1, total: 2 }, functions: { covered: 1, total: 2 } });
    const both = totals(mergeLcov(run2, mergeLcov(run1)), (p) => p.startsWith('/repo/packages/core/src/'));
    assert.deepEqual(both, { files: 2, lines: { covered: 4, total: 5 }, branches: { covered: 2, total: 2 }, functions: { covered: 2, total: 2 } });
    assert.equal(percent(both.lines), '80.0 % (4/5)');
    assert.equal(percent({ covered: 0, total: 0 }), '-');
  });

  it('prints a row per run and area, each counting only its folder, and all runs together by lines', () => {
    const runs = [
      { run: 'one', files: mergeLcov(run1) },
      { run: 'two', files: mergeLcov(run2) },
    ];
    const rows = summaryTable(runs, '/repo').map((r) => r.split('|').map((c) => c.trim()));
    const at = (label: string) => rows.findIndex((r) => r[1] === label);
    const core = at('@cairn/core');
    assert.deepEqual(rows[core]?.slice(2, 7), ['one', '1', '66.7 % (2/3)', '50.0 % (1/2)', '50.0 % (1/2)']);
    assert.deepEqual(rows[core + 1]?.slice(1, 7), ['', 'two', '2', '66.7 % (2/3)', '100.0 % (1/1)', '100.0 % (1/1)']);
    // Lines 1, 2 and 5 of a.ts (line 5 covered by the second run only) and c.ts's two.
    assert.deepEqual(rows[core + 2]?.slice(2, 7), ['all runs (lines)', '2', '80.0 % (4/5)', '', '']);
    assert.deepEqual(rows[at('of which memory store')]?.slice(2, 5), ['two', '1', '50.0 % (1/2)']);
    assert.deepEqual(rows[at('@cairn/kysely')]?.slice(2, 5), ['one', '1', '0.0 % (0/1)']);
    assert.deepEqual(rows[at('@cairn/redis')]?.slice(2, 5), ['-', '0', '-']);
  });
});

describe('scripts/coverage: where a run ran', () => {
  it('resolves relative paths against the folder of the run that wrote them', () => {
    assert.equal(runFolder('e2e-conformance.lcov', '/repo'), '/repo/e2e');
    assert.equal(runFolder('kysely-test.lcov', '/repo'), '/repo/packages/kysely');
    const files = mergeLcov('SF:../packages/core/src/x.ts\nDA:1,1\nend_of_record\n', new Map(), '/repo/e2e');
    assert.deepEqual([...files.keys()], ['/repo/packages/core/src/x.ts']);
  });
});
