/**
 * The proof's concurrency-limited workflow (issue 17): at most {@link LIMIT} runs of one tenant
 * execute at once across every worker process. Its one step does some work and writes a start and
 * an end record to the ledger (`ledger.ts`), which the judge (`judge-ledgers.ts`) reads.
 */
import { defineWorkflow } from '@cairn/core';
import { appendLedger, crossProcessNow } from './ledger.js';

export const LIMITED_WORKFLOW_NAME = 'proof-limited';
/** The concurrency limit per tenant the judge holds the ledgers to. */
export const LIMIT = 2;
/** The tenants the limited runs are spread over, round robin. */
export const TENANTS = ['t0', 't1', 't2'] as const;

/**
 * Runs keyed by `input.tenant`, at most {@link LIMIT} executing at once per tenant; one inline step
 * that takes `workMs`. Inline on purpose: while a queued step waits, its run gives its slot up,
 * and the body would run outside the limit (correctly, but then the ledger would not show it).
 */
export function limitedWorkflow(ledgerDir: string, workMs: number) {
  return defineWorkflow(
    LIMITED_WORKFLOW_NAME,
    async (ctx, input: { tenant: string; n: number }) =>
      ctx.step('work', async (step) => {
        const base = { runId: step.runId, tenant: input.tenant, step: step.key, pid: process.pid };
        appendLedger(ledgerDir, { ...base, event: 'start', at: crossProcessNow() });
        // The work stops when the engine says its execution is over (its lease or slot lost), as a
        // body that honours its signal does; the end record says which it was.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, workMs);
          step.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
        appendLedger(ledgerDir, { ...base, event: 'end', at: crossProcessNow(), aborted: step.signal.aborted });
        return input.n;
      }),
    { concurrency: { limit: LIMIT, key: (input) => input.tenant } },
  );
}
