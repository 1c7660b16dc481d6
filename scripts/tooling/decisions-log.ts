/**
 * `pnpm decisions` keeps docs/decisions.md in the shape its numbering rule states: sections in
 * number order, numbers 1..N without gaps, and an index table (number, title, status) at the top
 * that matches the sections. It sorts the sections, rebuilds the index (keeping each decision's
 * status; a new decision starts as `accepted`) and writes the file. `pnpm decisions --check`
 * changes nothing and exits 1 when the file would change (packages/core/test/decisions-log.test.ts
 * checks the same rule, so CI fails on a log out of shape).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const FILE = join(dirname(fileURLToPath(import.meta.url)), '../../docs/decisions.md');
const INDEX_START = '<!-- index: rebuilt by `pnpm decisions`; edit a status here, never a number or a title -->';
const INDEX_END = '<!-- end of index -->';

interface Section {
  readonly number: number;
  readonly title: string;
  readonly text: string;
}

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } }, strict: true });

const source = readFileSync(FILE, 'utf8');
const firstSection = source.search(/^## \d+\. /m);
if (firstSection < 0) throw new Error('docs/decisions.md has no numbered section');
const preamble = stripIndex(source.slice(0, firstSection)).trimEnd();
const sections = splitSections(source.slice(firstSection));
const statuses = readStatuses(source);

const sorted = [...sections].sort((a, b) => a.number - b.number);
sorted.forEach((section, i) => {
  // A gap or a repeated number is a mistake to fix by hand (which decision keeps its number is a
  // judgement), so the tool refuses instead of renumbering silently.
  if (section.number !== i + 1) throw new Error(`decision numbers must run 1..N without gaps or repeats; found ${section.number} where ${i + 1} belongs`);
});

for (const [number, status] of statuses) {
  const later = /^(?:superseded|amended) by (\d+)$/.exec(status);
  // A status names a later decision that exists: the reader follows it to what is true now.
  if (status !== 'accepted' && !(later && Number(later[1]) > number && Number(later[1]) <= sorted.length)) {
    throw new Error(`decision ${number}: status "${status}" must be accepted, or superseded/amended by a later decision`);
  }
}

const rows = sorted.map((s) => `| ${s.number} | ${s.title.replaceAll('|', '\\|')} | ${statuses.get(s.number) ?? 'accepted'} |`);
const index = [INDEX_START, '', '| # | decision | status |', '|---|---|---|', ...rows, '', INDEX_END].join('\n');
const next = `${preamble}\n\n${index}\n\n${sorted.map((s) => s.text.trimEnd()).join('\n\n')}\n`;

if (values.check) {
  if (next !== source) {
    console.error('docs/decisions.md is out of shape (order, numbering or index); run `pnpm decisions`');
    process.exit(1);
  }
} else if (next !== source) {
  writeFileSync(FILE, next);
  console.log(`docs/decisions.md: ${sorted.length} decisions, index rebuilt`);
}

function splitSections(text: string): Section[] {
  const starts = [...text.matchAll(/^## (\d+)\. (.*)$/gm)];
  return starts.map((m, i) => ({
    number: Number(m[1]),
    title: (m[2] ?? '').trim(),
    text: text.slice(m.index, starts[i + 1]?.index ?? text.length),
  }));
}

function stripIndex(text: string): string {
  const start = text.indexOf(INDEX_START);
  const end = text.indexOf(INDEX_END);
  return start < 0 || end < 0 ? text : text.slice(0, start) + text.slice(end + INDEX_END.length);
}

function readStatuses(text: string): Map<number, string> {
  const out = new Map<number, string>();
  const start = text.indexOf(INDEX_START);
  const end = text.indexOf(INDEX_END);
  if (start < 0 || end < 0) return out;
  for (const m of text.slice(start, end).matchAll(/^\| (\d+) \| .* \| ([^|]+) \|$/gm)) out.set(Number(m[1]), (m[2] ?? '').trim());
  return out;
}
