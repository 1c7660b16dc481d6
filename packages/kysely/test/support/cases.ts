import { after, before, describe } from 'node:test';
import { contractCases } from './contract-cases.js';
import { driverCases } from './driver-cases.js';
import { eventMessagesMigrationCase } from './event-messages-cases.js';
import { operationsMigrationCase } from './operations-migration-cases.js';
import { postgresStepCases } from './postgres-step-cases.js';
import { runDeadlineMigrationCase } from './run-deadline-cases.js';
import { runTraceContextMigrationCase } from './run-trace-context-cases.js';
import { slotCases } from './slot-cases.js';
import { tagCases } from './tag-cases.js';
import { stepTurnMigrationCase } from './step-turn-cases.js';
import { stepWriteCases } from './step-write-cases.js';
import { openStore, type StoreContext } from './store-case-kit.js';
import type { Target } from './targets.js';

/** The direct contract tests of the brief, on one dialect; the cases live in files named for what they test. */
export function storeCases(target: Target): void {
  describe(`@cairn/kysely on ${target.dialect}`, { skip: target.skip === undefined ? false : `no ${target.dialect} server: ${target.skip}` }, () => {
    // Filled in \`before\`, read by the cases when they run: one store on a fresh prefix for them all.
    const ctx = {} as StoreContext;
    before(async () => {
      await target.setup();
      Object.assign(ctx, await openStore(target));
    });
    after(async () => {
      await ctx.done?.();
      await target.teardown();
    });

    contractCases(target, ctx);
    stepWriteCases(target, ctx);
    stepTurnMigrationCase(target);
    runDeadlineMigrationCase(target);
    eventMessagesMigrationCase(target);
    operationsMigrationCase(target);
    runTraceContextMigrationCase(target);
    slotCases(target);
    tagCases(target);
    postgresStepCases(target, ctx);
    driverCases(target, ctx);
  });
}
