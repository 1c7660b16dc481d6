import { defineGraph, ref } from '@cairn/graph';

// The actions: ordinary functions, registered by name. The graph below names them.
export const calls: string[] = [];
const actions = {
  reserveStock: (input: unknown) => {
    calls.push(`reserve ${JSON.stringify(input)}`);
    return { reservationId: 'res-1' };
  },
  releaseStock: (input: unknown) => {
    calls.push(`release ${JSON.stringify(input)}`);
    return { released: true };
  },
  chargeCard: (input: unknown) => {
    calls.push(`charge ${JSON.stringify(input)}`);
    return { paymentId: 'pay-1' };
  },
  shipLine: (input: unknown) => {
    calls.push(`ship ${JSON.stringify(input)}`);
    return { parcel: `parcel-${(input as { sku: string }).sku}` };
  },
  emailCustomer: (input: unknown) => {
    calls.push(`email ${JSON.stringify(input)}`);
    return null;
  },
};

// The graph: plain JSON (`ref(...)` is `{ $ref: ... }`), so it can be stored, reviewed and loaded back.
export const orderApproval = defineGraph(
  'order-approval',
  {
    start: 'reserve',
    nodes: {
      reserve: {
        action: 'reserveStock',
        input: { orderId: ref('input.orderId'), lines: ref('input.lines') },
        compensate: 'releaseStock', // undone if the run fails or is cancelled later
        // Large orders wait for a manager; small ones are charged at once.
        next: { branch: [{ when: { gte: [ref('input.total'), 1000] }, to: 'managerApproval' }], otherwise: 'charge' },
      },
      managerApproval: {
        approval: {
          schema: { type: 'object', properties: { note: { type: 'string', maxLength: 200 } }, additionalProperties: false },
          expiry: '2d',
          approvers: ['ada', 'grace'],
        },
        next: 'charge',
        onReject: 'cancel',
        onExpiry: 'cancel',
      },
      charge: {
        action: 'chargeCard',
        input: { orderId: ref('input.orderId'), cents: ref('input.total') },
        retries: 3,
        backoff: '1s',
        onError: 'cancel',
        next: 'ship',
      },
      ship: { forEach: { items: ref('input.lines'), action: 'shipLine', concurrency: 2 }, next: 'notify' },
      notify: { action: 'emailCustomer', input: { orderId: ref('input.orderId'), parcels: ref('ship') } },
      cancel: { action: 'releaseStock', input: { orderId: ref('input.orderId'), reason: 'not approved or not paid' } },
    },
    output: { payment: ref('charge.paymentId'), parcels: ref('ship'), approval: ref('managerApproval'), cancelled: ref('cancel.released') },
  },
  { version: '1', actions },
);
