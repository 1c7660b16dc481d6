// The example's one workflow: an order that reserves stock, charges in a queued step (a push of its
// own), waits out a short cool-off and ships. Each step body notes that it ran, so the example's
// test can count that every body ran once however many pushes the run took.
import { defineWorkflow } from '@cairn/core';

/** `<runId> <step>` for every step body that ran in this process, in order. */
export const bodiesRan: string[] = [];

export const order = defineWorkflow('order', async (ctx, input: { orderId: string; items: number }) => {
  const reserved = await ctx.step('reserve stock', () => {
    bodiesRan.push(`${ctx.runId} reserve stock`);
    return input.items;
  });
  // A queued step runs in a push of its own: the handler hands it back to the pusher.
  const paymentId = await ctx.step(
    'charge card',
    () => {
      bodiesRan.push(`${ctx.runId} charge card`);
      return `pay_${input.orderId}`;
    },
    { queued: true },
  );
  // A durable sleep: the push ends with the run waiting; the dispatcher (or the next tick) wakes it.
  await ctx.sleep('cool-off', 200);
  const tracking = await ctx.step('ship', () => {
    bodiesRan.push(`${ctx.runId} ship`);
    return `trk_${input.orderId}`;
  });
  return { orderId: input.orderId, reserved, paymentId, tracking };
});
