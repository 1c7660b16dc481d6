// What each entry point of @cairn/core exports, values and types, compared with the lists in
// test/entry-exports/: growth of the application's front door (issue 34 part 2) shows as a diff.
// After a deliberate change, CAIRN_UPDATE_ENTRY_EXPORTS=1 writes the lists again.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import ts from 'typescript';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const LISTS = fileURLToPath(new URL('./entry-exports/', import.meta.url));
const ENTRIES = { main: 'index.ts', testing: 'testing/index.ts', backend: 'backend/index.ts' } as const;

/** The names an entry exports, each marked `type` when it is only a type, sorted. */
function exportsOf(file: string): string[] {
  const program = ts.createProgram([file], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  assert.ok(source, `${file} is in the program`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  assert.ok(moduleSymbol, `${file} is a module`);
  return checker
    .getExportsOfModule(moduleSymbol)
    .map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return target.flags & ts.SymbolFlags.Value ? symbol.name : `type ${symbol.name}`;
    })
    .sort((a, b) => (a.replace(/^type /, '') < b.replace(/^type /, '') ? -1 : 1));
}

describe('entry points of @cairn/core', () => {
  for (const [entry, file] of Object.entries(ENTRIES)) {
    it(`${entry} (${file}) exports what test/entry-exports/${entry}.txt lists`, () => {
      const names = exportsOf(`${SRC}${file}`);
      const listFile = `${LISTS}${entry}.txt`;
      if (process.env.CAIRN_UPDATE_ENTRY_EXPORTS === '1') writeFileSync(listFile, `${names.join('\n')}\n`);
      const listed = readFileSync(listFile, 'utf8').trim().split('\n');
      assert.deepEqual(names, listed, `the exports of ${entry} changed: if on purpose, run with CAIRN_UPDATE_ENTRY_EXPORTS=1 and commit the list`);
    });
  }
});
