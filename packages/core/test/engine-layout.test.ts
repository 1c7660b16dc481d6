import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// How the engine's code is divided (docs/decisions.md, decision 44), read from the sources.
const ENGINE = resolve(dirname(fileURLToPath(import.meta.url)), '../src/engine');
const read = (file: string) => readFileSync(resolve(ENGINE, file), 'utf8');

// An execution's parts (decision 55): each is given what it needs through its constructor, and
// imports only the parts it is given. The replay imports none of them.
const EXECUTION = resolve(ENGINE, 'execution');
const PARTS: Record<string, string[]> = {
  'replay.ts': [],
  'task-steps.ts': ['replay.ts'],
  'saga.ts': ['replay.ts', 'task-steps.ts'],
  'child-calls.ts': ['replay.ts'],
  'waits.ts': ['replay.ts', 'child-calls.ts'],
  'stream-writes.ts': ['replay.ts'],
  'execution.ts': ['replay.ts', 'task-steps.ts', 'saga.ts', 'child-calls.ts', 'waits.ts', 'stream-writes.ts'],
};

// engine/'s folders, each one responsibility (issue 34 part 2).
const FOLDERS: Record<string, string> = {
  define: 'what a workflow is written with: definitions, the context API, durations, retry policies',
  execution: "one run's execution (composed around one Replay) and one queued step's",
  flow: 'flow control: concurrency and rate limits, singleton, debounce and batch starts, paused workflows at claim',
  messages: 'talking to a running run: events, requests, queries, streams',
  operations: 'what is done to runs from outside: start, reads, cancel, delete, retry, fork, prune, pause, timeline, versions, doctor',
  wakeups: 'how a run is woken: store signals, parents, results, the roster of listening workers',
};
// The top of engine/: createEngine and its assembly, and what every folder shares.
const TOP = [
  'engine.ts',
  'engine-contract.ts',
  'engine-parts.ts',
  'engine-workers.ts',
  'engine-runtime.ts',
  'engine-dispatch.ts',
  'engine-durations.ts',
  'check-engine-options.ts',
  'check-input.ts',
  'check-tags.ts',
  'workflow-registry.ts',
  'queue-names.ts',
  'outage.ts',
  'fault-point.ts',
  'uuid.ts',
  'settles-within.ts',
];
const MEMORY = resolve(ENGINE, '../memory');

/** Every function (declarations, expressions, arrows, methods) in `file`, with its length in lines. */
function functionLengths(file: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = node.name ?? (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent) ? node.parent.name : undefined);
      found.push({ name: named === undefined ? `(function at line ${first + 1})` : named.getText(source), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every relative import (types included) of every .ts file under `dir`, as absolute paths. */
function importGraph(dir: string): Map<string, string[]> {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) files.push(path);
    }
  };
  walk(dir);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/g)].map((m) =>
      resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts')),
    );
    graph.set(
      file,
      targets.filter((t) => files.includes(t)),
    );
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan): each is an import cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('engine layout (decisions 44, 55, 73)', () => {
  it('an execution is composed: each part says what it owns, extends nothing, and imports only the parts it is given', () => {
    const readPart = (file: string) => readFileSync(resolve(EXECUTION, file), 'utf8');
    for (const [file, allowed] of Object.entries(PARTS)) {
      const text = readPart(file);
      assert.match(text, /^\/\/ /, `${file} opens with a // comment saying what it owns`);
      assert.doesNotMatch(text, /\bclass \w+ extends /, `${file} extends a class`);
      const parts = [...text.matchAll(/from '\.\/([^']+)\.js'/g)].map((m) => `${m[1]}.ts`).filter((f) => f in PARTS);
      assert.deepEqual(
        parts.filter((f) => !allowed.includes(f)),
        [],
        `${file} imports parts it is not given`,
      );
    }
  });

  it('no import cycle anywhere in packages/core/src (type imports included)', () => {
    const src = resolve(ENGINE, '..');
    const found = cycles(importGraph(src)).map((c) => c.map((f) => relative(src, f)).sort());
    assert.deepEqual(found, []);
  });

  it('createEngine assembles: option checks, dispatch and wake-up handling live in their own files', () => {
    const engine = read('engine.ts');
    for (const [what, text] of [
      ['the duration checks', 'checkEngineDurations'],
      ['the retention check', 'checkRetention'],
      ['the flow-control store check', 'checkFlowStore'],
      ['the worker id default', 'randomBytes'],
      ['queue names', 'computeQueueNames'],
      ['a queue send', 'queue.send('],
      ['the wake-up handlers', 'observeCancelElsewhere'],
    ] as const) {
      assert.ok(!engine.includes(text), `engine.ts holds ${what}`);
    }
    assert.match(read('check-engine-options.ts'), /export function checkEngineOptions/);
    assert.match(read('engine-dispatch.ts'), /export function createDispatch/);
    assert.match(read('wakeups/wake-up-handlers.ts'), /export function wakeUpHandlers/);
  });

  it('engine/ is divided by responsibility: its folders, and at its top only the assembly and what every folder shares', () => {
    const entries = readdirSync(ENGINE);
    const folders = entries.filter((name) => statSync(join(ENGINE, name)).isDirectory()).sort();
    assert.deepEqual(folders, Object.keys(FOLDERS).sort(), 'the folders of engine/ (each listed in FOLDERS with what it holds)');
    const top = entries.filter((name) => !folders.includes(name)).sort();
    assert.deepEqual(top, [...TOP].sort(), 'files at the top of engine/: a new file goes into the folder of its responsibility');
    for (const folder of folders) {
      for (const file of readdirSync(join(ENGINE, folder))) {
        if (file.endsWith('.ts')) assert.match(read(join(folder, file)), /^(\/\/ |import |export |\/\*\*)/, `${folder}/${file} is a module`);
      }
    }
  });

  it('createEngine and createMemoryStore read as assembly of named parts: no function of theirs or of their parts is longer than 80 lines', () => {
    const files = [
      ...['engine.ts', 'engine-parts.ts', 'engine-workers.ts'].map((f) => resolve(ENGINE, f)),
      ...readdirSync(resolve(ENGINE, 'operations'))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => resolve(ENGINE, 'operations', f)),
      ...readdirSync(MEMORY)
        .filter((f) => f.endsWith('.ts'))
        .map((f) => resolve(MEMORY, f)),
    ];
    const long: string[] = [];
    for (const file of files) {
      for (const fn of functionLengths(file)) if (fn.lines > 80) long.push(`${relative(resolve(ENGINE, '..'), file)}: ${fn.name} (${fn.lines} lines)`);
    }
    assert.deepEqual(long, []);
  });

  it('no file of packages/core/src reaches 600 lines', () => {
    const src = resolve(ENGINE, '..');
    const long = [...importGraph(src).keys()].filter((file) => readFileSync(file, 'utf8').split('\n').length >= 600).map((file) => relative(src, file));
    assert.deepEqual(long, []);
  });
});
