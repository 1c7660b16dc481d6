// docs/decisions.md states its own numbering rule (sections in number order, 1..N without gaps, an
// index that matches the sections, statuses that name a later decision). The rule is kept by
// `pnpm decisions`; this test runs its check so that a log out of shape fails CI, not a reader.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');

it('docs/decisions.md is in number order, without gaps, with an index that matches its sections', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/tooling/decisions-log.ts', '--check'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  const text = readFileSync(join(ROOT, 'docs/decisions.md'), 'utf8');
  const headings = [...text.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1]));
  assert.deepEqual(
    headings,
    headings.map((_, i) => i + 1),
  );
  // Every decision is listed once in the index, so a reader can find it by number.
  const indexed = [...text.matchAll(/^\| (\d+) \| /gm)].map((m) => Number(m[1]));
  assert.deepEqual(indexed, headings);
});
