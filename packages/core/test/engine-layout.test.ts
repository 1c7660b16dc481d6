import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

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
  'execution.ts': ['replay.ts', 'task-steps.ts', 'saga.ts', 'child-calls.ts', 'waits.ts'],
};

describe('engine layout (decisions 44, 55)', () => {
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
