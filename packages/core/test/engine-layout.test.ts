import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// How the engine's code is divided (docs/decisions.md, decision 44), read from the sources.
const ENGINE = resolve(dirname(fileURLToPath(import.meta.url)), '../src/engine');
const read = (file: string) => readFileSync(resolve(ENGINE, file), 'utf8');

// An execution's layers, bottom first: each builds on the one before it only.
const LAYERS = [
  'execution-calls.ts',
  'execution-records.ts',
  'execution-tasks.ts',
  'execution-saga.ts',
  'execution-children.ts',
  'execution-primitives.ts',
  'execution.ts',
];

const localImports = (file: string): string[] => [...read(file).matchAll(/from '\.\/([^']+)\.js'/g)].map((m) => `${m[1]}.ts`);

describe('engine layout (decision 44)', () => {
  it('each layer of an execution says what it owns, and imports no layer above it', () => {
    for (const [index, file] of LAYERS.entries()) {
      assert.match(read(file), /^\/\/ /, `${file} opens with a // comment saying what it owns`);
      const above = LAYERS.slice(index + 1).filter((layer) => localImports(file).includes(layer));
      assert.deepEqual(above, [], `${file} imports layers above it`);
    }
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
    assert.match(read('wake-up-handlers.ts'), /export function wakeUpHandlers/);
  });
});
