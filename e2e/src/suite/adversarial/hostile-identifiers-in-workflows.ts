import assert from 'node:assert/strict';
import { CairnError, defineWorkflow, type WorkflowContext } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from '../engine/engine-world.js';
import { MALFORMED_IDENTIFIERS, NOT_STRINGS, show } from '../fixtures/hostile-arguments.js';

/** One primitive called with a bad identifier from workflow code. */
const PRIMITIVES: ReadonlyArray<[string, (ctx: WorkflowContext, bad: unknown) => Promise<unknown>]> = [
  ['ctx.step name', (ctx, bad) => ctx.step(bad as string, () => 'ran')],
  ['ctx.sleep name', (ctx, bad) => ctx.sleep(bad as string, 1)],
  ['ctx.waitForEvent name', (ctx, bad) => ctx.waitForEvent(bad as string, { timeout: 1 })],
  ['ctx.setState key', (ctx, bad) => ctx.setState(bad as string, 'value')],
  ['ctx.state key', (ctx, bad) => ctx.state(bad as string)],
  ['ctx.child workflow', (ctx, bad) => ctx.child(bad as string, null)],
  ['ctx.child options.name', (ctx, bad) => ctx.child('hostile-child', null, { name: bad as string })],
];

/**
 * Adversarial: identifiers that no backend stores exactly (lone surrogates, NUL) and values that
 * are not strings, passed to the workflow primitives. Each call must throw `INVALID_INPUT` into
 * the workflow at once — the same on every backend — instead of being recorded under a name that
 * Redis or MongoDB turn into U+FFFD (a hang, a false `NON_DETERMINISM`, an event that wakes the
 * wrong wait).
 *
 * The primitives check their identifiers with `checkIdentifier` (engine/check-input.ts) before
 * anything is recorded.
 */
export const hostileIdentifiersInWorkflowsGroup: CaseGroup = caseGroup(
  'adversarial.hostile-identifiers-in-workflows',
  'adversarial: malformed identifiers passed to workflow primitives',
  [
    conformanceCase('every primitive refuses a malformed or non-string identifier with INVALID_INPUT, the same on every backend', async (env) => {
      // By call: a replay repeats the calls before a suspension, and the last execution's answer counts.
      const outcomes = new Map<string, string>();
      const child = defineWorkflow('hostile-child', async () => 'child');
      const wf = defineWorkflow('hostile-identifiers', async (ctx) => {
        for (const [what, call] of PRIMITIVES) {
          for (const bad of [...MALFORMED_IDENTIFIERS, ...NOT_STRINGS.filter((v) => v !== undefined)]) {
            try {
              await call(ctx, bad);
              outcomes.set(`${what} ${show(bad)}`, 'accepted');
            } catch (error) {
              outcomes.set(`${what} ${show(bad)}`, CairnError.is(error) ? error.code : String(error));
            }
          }
        }
        return 'done';
      });
      const w = await engineWorld(env, [wf, child]);
      const h = await w.engine.startRun(wf, null);
      const run = await w.runToEnd(h.id);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      const wrong = [...outcomes].filter(([, outcome]) => outcome !== 'INVALID_INPUT').map(([call, outcome]) => `${call}: ${outcome}`);
      assert.deepEqual(wrong, [], 'every call must be refused with INVALID_INPUT');
      assert.deepEqual(await w.engine.state(h.id), {}, 'no state key was written');
      assert.deepEqual((await w.engine.listRuns({ workflow: 'hostile-child' })).runs, [], 'no child was started');
    }),
  ],
);
