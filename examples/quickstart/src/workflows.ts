import { appendFileSync } from 'node:fs';
import { defineWorkflow, NonRetryableError, type StepContext } from '@cairn/core';

/** Where step bodies log each execution (tab-separated), outside the engine, so the demo can count them. */
export const executionsLog = (dir: string) => `${dir}/executions.log`;

const logDir = () => process.env.CAIRN_DEMO_DIR ?? '.';

// Records that a step body really ran (and on which worker): the demo's independent witness.
function ran(step: StepContext): void {
  appendFileSync(executionsLog(logDir()), `${step.runId}\t${step.key}\t${step.attempt}\t${process.env.CAIRN_DEMO_WORKER ?? '?'}\n`);
  process.send?.({ type: 'step-started', runId: step.runId, key: step.key, attempt: step.attempt });
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

/** A business failure: retrying cannot make the bank accept the card, so it is not retried. */
export class CardDeclined extends NonRetryableError {
  override name = 'CardDeclined';
  readonly code = 'CARD_DECLINED';
}

/** The child workflow: ships a parcel. */
export const ship = defineWorkflow('ship-parcel', async (ctx, input: { orderId: string }) => {
  const courier = await ctx.step('book courier', (s) => {
    ran(s);
    return { courier: 'Rapid Parcels', pickup: 'tomorrow 9:00' };
  });
  const label = await ctx.step('print label', (s) => {
    ran(s);
    return `LBL-${input.orderId}`;
  });
  return { ...courier, label };
});

/**
 * The order workflow the demo runs: retries, a failure that is not retried, a crash-spanning step,
 * a sleep, an event, a child, and a compensation (the saga releases the stock if the order fails).
 */
export const order = defineWorkflow('order', async (ctx, input: { orderId: string; card: 'ok' | 'declined' }) => {
  await ctx.step(
    'reserve stock',
    (s) => {
      ran(s);
      return { reserved: 2 };
    },
    {
      // Runs (once, durably) only if the order fails or is cancelled after the stock was reserved.
      compensate: async () => {
        appendFileSync(executionsLog(logDir()), `${ctx.runId}\trelease-stock\t1\t${process.env.CAIRN_DEMO_WORKER ?? '?'}\n`);
      },
    },
  );
  const payment = await ctx.step(
    'charge card',
    (s) => {
      ran(s);
      if (input.card === 'declined') throw new CardDeclined('card declined');
      // The payment provider times out twice, then answers.
      if (s.attempt < 3) throw new Error(`payment gateway timeout (attempt ${s.attempt})`);
      return { paymentId: `pay_${input.orderId}` };
    },
    { retries: 2, backoff: { type: 'exponential', delay: '150ms' } },
  );
  await ctx.step('pack parcel', async (s) => {
    ran(s);
    // Slow on purpose: the demo kills the worker while this runs.
    await pause(1500, s.signal);
    return { boxes: 1 };
  });
  await ctx.sleep('cooling-off period', '1s');
  const approval = await ctx.waitForEvent<{ approvedBy: string }>('manager approval', { timeout: '1m' });
  const shipment = await ctx.child(ship, { orderId: input.orderId });
  await ctx.step('email customer', (s) => {
    ran(s);
    return `sent to customer of ${input.orderId}`;
  });
  return { orderId: input.orderId, ...payment, approvedBy: approval.approvedBy, shipment };
});
