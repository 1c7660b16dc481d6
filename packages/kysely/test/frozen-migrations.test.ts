import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { mysqlRoutines, mysqlStepRoutines } from '../src/mysql/step-routines.js';
import { postgresRoutines } from '../src/postgres/step-routines.js';
import { sqliteTriggers } from '../src/sqlite/triggers.js';
import { STEP_COLUMNS, STEP_COLUMNS_0001, STEP_COLUMNS_0003, tableNames } from '../src/schema/tables.js';

// SHA-256 of what cairn_0002_step_routines created when it shipped (computed from the sources of
// that release, prefix `cairn_`). A shipped migration must keep creating exactly that: databases
// that ran it have it, and later migrations (cairn_0003_step_turn) start from it.
const SHIPPED_0002 = {
  postgres: 'fd7a6690794449909817faff7187e63c627d773a610bddbe3bccb9294a9e0f2d',
  mariadb: 'a2659f0ef7da10eb0d7aca6d6ab2f44a18772c4be8dd120b993b05bb967fafab',
  mysql: '1bb0c41e25948bc2f759a78684d7b1d43796d93e2d03e7d13b3245af6291c08a',
  sqlite: '35eecee9295e14ebe7580cccfb37635fdc8b65280ebccfb4029518d6b6e835e9',
};

// SHA-256 of the step routines cairn_0003_step_turn created when it shipped (taken from the sources
// before cairn_0008_step_finished changed the generators): its down restores exactly these.
const SHIPPED_0003 = {
  postgres: '02137c82df70b0936acc765eccef2375b30ecc2134f5f60512a83248eb59ab70',
  mariadb: '43be95a67c09d64609fb1ecf0e647d7183578973c7b7677cdfbfe900084ac7cd',
  mysql: '5d22ca9615e0b44bb6998d8ffdd04881cf0fbfdcf0ac3e600622af172b5f956b',
};

const digest = (statements: string[]) => createHash('sha256').update(statements.join('\n;\n')).digest('hex');

describe('shipped migrations never change', () => {
  const names = tableNames('cairn_');

  it('cairn_0002_step_routines still creates the routines it shipped with, on every dialect', () => {
    assert.equal(digest(postgresRoutines(names, '0002')), SHIPPED_0002.postgres);
    assert.equal(digest(mysqlRoutines(names, 'utf8mb4_nopad_bin', '0002')), SHIPPED_0002.mariadb);
    assert.equal(digest(mysqlRoutines(names, 'utf8mb4_0900_bin', '0002')), SHIPPED_0002.mysql);
    assert.equal(digest(sqliteTriggers(names)), SHIPPED_0002.sqlite);
  });

  it("the step columns of cairn_0001_initial are a prefix of the store's, which add turn (cairn_0003_step_turn), then fence (cairn_0008_step_finished)", () => {
    assert.deepEqual(STEP_COLUMNS.slice(0, STEP_COLUMNS_0001.length), [...STEP_COLUMNS_0001]);
    assert.deepEqual(STEP_COLUMNS_0003.slice(STEP_COLUMNS_0001.length), ['turn']);
    assert.deepEqual(STEP_COLUMNS.slice(STEP_COLUMNS_0001.length), ['turn', 'fence']);
  });

  it('cairn_0003_step_turn still creates the step routines it shipped with (its down of 0008 restores them)', () => {
    assert.equal(digest(postgresRoutines(names, '0003')), SHIPPED_0003.postgres);
    assert.equal(digest(mysqlStepRoutines(names, 'utf8mb4_nopad_bin', '0003')), SHIPPED_0003.mariadb);
    assert.equal(digest(mysqlStepRoutines(names, 'utf8mb4_0900_bin', '0003')), SHIPPED_0003.mysql);
  });

  it('the step insert of cairn_0008_step_finished records a finished attempt 1 and stamps the fence', () => {
    for (const text of [postgresRoutines(names, '0008').join('\n'), mysqlStepRoutines(names, 'utf8mb4_nopad_bin', '0008').join('\n')]) {
      assert.match(text, /\bp_attempt_status\b/);
      assert.match(text, /, turn, fence\)\s*values \([^)]*p_turn, p_fence\)/, 'an insert stamps the fence');
      assert.match(text, /p_attempt_status, p_worker, p_attempt_started_at, p_now, p_attempt_output, p_attempt_error/, 'and writes the finished attempt');
    }
  });

  it('the routines of cairn_0003_step_turn take and store turn; those of 0002 never name it', () => {
    for (const [v2, v3] of [
      [postgresRoutines(names, '0002'), postgresRoutines(names, '0003')],
      [mysqlRoutines(names, 'utf8mb4_nopad_bin', '0002'), mysqlRoutines(names, 'utf8mb4_nopad_bin', '0003')],
    ] as const) {
      assert.doesNotMatch(v2.join('\n'), /\bp?_?turn\b/);
      const text = v3.join('\n');
      assert.match(text, /\bp_turn bigint\b/, 'the routines take p_turn');
      assert.match(text, /turn = coalesce\(p_turn, (s\.)?turn\)/, 'a transition sets turn only when given');
      assert.match(text, /, updated_at, turn\)\s*values \([^)]*p_now, p_now, p_turn\)/, 'an insert stores it');
    }
  });
});
