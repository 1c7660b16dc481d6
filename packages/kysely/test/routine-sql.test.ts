import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createContext } from '../src/context.js';
import { dialectOf } from '../src/dialect/detect.js';
import type { AnyKysely } from '../src/dialect/types.js';
import { namedStatement } from '../src/postgres/named-statement.js';
import { tableNames } from '../src/schema/tables.js';

const context = (prepared: boolean) => createContext({} as AnyKysely, dialectOf('postgres'), tableNames('cairn_'), true, prepared);
const TEXT = 'select "cairn_step_insert_v2"($1::text) as r';
const OTHER = 'select * from "cairn_step_transition"($1::text)';

describe('StoreContext.routineSql', () => {
  it('sends each text as its named statement, made once per text', () => {
    const ctx = context(true);
    const first = ctx.routineSql(TEXT);
    assert.deepEqual(first, namedStatement(TEXT));
    assert.equal(ctx.routineSql(TEXT), first);
    assert.deepEqual(ctx.routineSql(OTHER), namedStatement(OTHER));
    assert.notDeepEqual(ctx.routineSql(OTHER), first);
  });

  it('sends the text as it is once named statements are dropped, and without preparedStatements', () => {
    const ctx = context(true);
    ctx.routineSql(TEXT);
    assert.equal(ctx.dropNamedStatements(new Error('prepared statement does not exist')), true);
    assert.equal(ctx.routineSql(TEXT), TEXT);
    assert.equal(ctx.routineSql(OTHER), OTHER);
    assert.equal(context(false).routineSql(TEXT), TEXT);
  });
});
