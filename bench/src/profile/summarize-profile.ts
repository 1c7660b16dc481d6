/**
 * `node --import tsx src/profile/summarize-profile.ts <file.cpuprofile> [top]`
 *
 * Where a V8 CPU profile's time went: self time of every function, grouped by what the code is
 * (the engine, serialization, the Kysely store, Kysely's query building, the pg driver,
 * diagnostics/logging, promises and timers, Node's socket I/O, garbage collection, idle), then the
 * top functions by self time. A native function counts with its nearest caller that has a script
 * (a socket `writev` is Node's stream I/O, a string build under the transpiler's `__name` is the
 * transpiler's). Idle time (waiting for the server) is listed but left out of the
 * percentages, which are of the CPU the process spent.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The group a function belongs to, from its script and name; first match wins. */
const GROUPS: [string, (url: string, fn: string) => boolean][] = [
  ['idle (waiting for I/O)', (_u, f) => f === '(idle)'],
  ['garbage collection', (_u, f) => f === '(garbage collector)'],
  ['tsx transpiler helpers (`__name`: source runs only)', (u, f) => f === '__name' || u.includes('/tsx/') || u.includes('/esbuild/')],
  [
    'serialization (JSON)',
    (u, f) => u.includes('/core/src/serialization/') || u.includes('/codec/') || (u === '' && /^(stringify|parse|JSONSerialize|JSONParse)$/.test(f)),
  ],
  ['diagnostics / logging', (u) => u.includes('/core/src/observe/') || u.includes('/core/src/logging/') || u.includes('diagnostics_channel')],
  ['engine (@cairn/core engine)', (u) => u.includes('/core/src/engine/') || u.includes('/core/src/errors/') || u.includes('/core/src/clock/')],
  ['memory store (@cairn/core, structuredClone included)', (u, f) => u.includes('/core/src/memory/') || f === 'structuredClone'],
  ['AbortController / AbortSignal / DOMException (node)', (u) => /node:internal\/(abort_controller|event_target|per_context\/domexception)/.test(u)],
  ['other @cairn/core', (u) => u.includes('/core/src/')],
  ['Kysely store (@cairn/kysely)', (u) => u.includes('/packages/kysely/src/')],
  ['Kysely query building / compiling', (u) => /node_modules\/(\.pnpm\/)?kysely/.test(u)],
  [
    'pg driver (pg, pg-protocol, pg-types, pg-pool)',
    (u) => /node_modules\/.*\/(pg|pg-protocol|pg-types|pg-pool|pg-connection-string|postgres-[a-z]+)\//.test(u),
  ],
  ['better-sqlite3 (SQLite, in-process)', (u) => u.includes('better-sqlite3')],
  [
    'promises / microtasks / timers',
    (u, f) =>
      u.includes('node:internal/timers') ||
      u.includes('node:timers') ||
      u.includes('node:internal/process/task_queues') ||
      /^(\(program\)|runMicrotasks|processTicksAndRejections)$/.test(f) ||
      (u === '' && /Promise|then|resolve|reject|await/i.test(f)),
  ],
  [
    'node socket / stream I/O',
    (u) =>
      /node:(net|internal\/(stream|streams|net|buffer|event_target|events|abort_controller|util)|stream|events|buffer)/.test(u) ||
      u.includes('node:internal/stream_base_commons'),
  ],
  ['bench harness', (u) => u.includes('/bench/src/')],
];

function groupOf(url: string, fn: string): string {
  for (const [name, test] of GROUPS) if (test(url, fn)) return name;
  return url === '' ? `other native (${fn || 'anonymous'})` : 'other';
}

const file = process.argv[2];
if (!file) throw new Error('usage: summarize-profile.ts <file.cpuprofile> [top]');
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, ProfileNode>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n);
const SPECIAL = new Set(['(idle)', '(garbage collector)', '(program)', '(root)']);

/**
 * A native function (no script) counts with its nearest caller that has one: a socket `writev`
 * with Node's stream code, `JSON.parse` inside the pg driver with the driver. Only JSON natives
 * called from the engine's own code stay serialization.
 */
function attributed(node: ProfileNode): { url: string; fn: string } {
  const { url, functionName } = node.callFrame;
  if (url !== '' || SPECIAL.has(functionName)) return { url, fn: functionName };
  for (let p = parentOf.get(node.id); p; p = parentOf.get(p.id)) {
    if (p.callFrame.url === '') continue;
    if (/^(stringify|parse)$/.test(functionName) && p.callFrame.url.includes('/core/src/')) return { url: '', fn: functionName };
    return { url: p.callFrame.url, fn: p.callFrame.functionName === '__name' ? '__name' : functionName };
  }
  return { url, fn: functionName };
}
const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]!;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
}
const groups = new Map<string, number>();
const functions = new Map<string, number>();
let busy = 0;
for (const [id, us] of selfUs) {
  const node = byId.get(id)!;
  const { functionName, url, lineNumber } = node.callFrame;
  const owner = attributed(node);
  const group = groupOf(owner.url, owner.fn);
  groups.set(group, (groups.get(group) ?? 0) + us);
  if (group !== 'idle (waiting for I/O)') busy += us;
  const where = url.replace(/^.*\/(packages|node_modules|bench)\//, '$1/').replace(/^file:\/\//, '');
  const key = `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : '(native)'}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
}
const ms = (us: number) => (us / 1000).toFixed(0);
const pct = (us: number) => `${((100 * us) / busy).toFixed(1)} %`;
process.stdout.write(`| group | self time (ms) | share of CPU |\n| --- | ---: | ---: |\n`);
for (const [name, us] of [...groups].sort((a, b) => b[1] - a[1])) {
  process.stdout.write(`| ${name} | ${ms(us)} | ${name.startsWith('idle') ? '–' : pct(us)} |\n`);
}
process.stdout.write(
  `| **CPU (all but idle)** | **${ms(busy)}** | 100 % |\n\nTop ${top} functions by self time:\n\n| function | self (ms) | share |\n| --- | ---: | ---: |\n`,
);
for (const [name, us] of [...functions]
  .filter(([n]) => !n.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top)) {
  process.stdout.write(`| \`${name}\` | ${ms(us)} | ${pct(us)} |\n`);
}
