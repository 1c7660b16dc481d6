import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type AnyWorkflowDefinition, createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';

// `AnyWorkflowDefinition`: the one name for "a workflow of any input and output type", so the
// `any` it needs (and its lint suppression) is written once in the repository.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SKIP = new Set(['node_modules', 'dist', '.git', '.turbo']);

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    SKIP.has(entry.name) ? [] : entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );

describe('AnyWorkflowDefinition', () => {
  it('holds workflows of different input and output types side by side, and they run', async () => {
    const count = defineWorkflow('count', async (_ctx, input: { n: number }) => input.n + 1);
    const greet = defineWorkflow('greet', async (_ctx, name: string) => `hello ${name}`);
    const workflows: AnyWorkflowDefinition[] = [count, greet];
    const engine = createEngine({ store: createMemoryStore(), workflows, startMode: 'inline' });
    await engine.start({ workers: false });
    try {
      assert.equal(await (await engine.startRun(count, { n: 1 })).result(), 2);
      assert.equal(await (await engine.startRun(greet, 'ada')).result(), 'hello ada');
    } finally {
      await engine.stop();
    }
  });

  it('is the only place in the repository that gives WorkflowDefinition an `any` type argument', () => {
    // Built from parts, so this file does not match itself.
    const anyArgument = new RegExp(`${'WorkflowDefinition'}<any\\b`);
    const writers = sourceFiles(ROOT)
      .filter((file) => anyArgument.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    assert.deepEqual(writers, ['packages/core/src/engine/define/workflow-context.ts']);
  });
});
